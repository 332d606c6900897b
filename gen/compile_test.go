package gen

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"
)

// behaviourTest runs in the temporary module next to the generated shapes
// and job packages: it calls generated methods on a fake executor and
// checks what they decode, so the golden files are proven to work, not only
// to look right.
const behaviourTest = `package shapes_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"example.com/golden/job"
	"example.com/golden/shapes"
	"github.com/luagen/luagen/runtime"
)

type fake struct {
	reply      runtime.Value
	keys, args []string
}

func (f *fake) EvalSha(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	f.keys, f.args = keys, args
	return f.reply, nil
}
func (f *fake) Eval(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	return f.EvalSha(ctx, s, keys, args)
}
func (f *fake) Load(ctx context.Context, s *runtime.Script) error { return nil }

func TestStats(t *testing.T) {
	s := runtime.StringValue
	f := &fake{reply: runtime.ArrayValue(runtime.IntValue(2),
		runtime.ArrayValue(s("a"), s("b")),
		runtime.ArrayValue(s("a"), s("1"), s("b"), s("2")),
		runtime.Nil,
		runtime.IntValue(7))}
	got, err := shapes.New(f).Stats(context.Background(), shapes.StatsKeys{H: "h"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Count != 2 || len(got.Names) != 2 || got.Names[1] != "b" || got.All["b"] != "2" || got.First != nil || got.Idle != 7*time.Second {
		t.Fatalf("Stats = %+v", got)
	}
	if len(f.keys) != 1 || f.keys[0] != "h" || len(f.args) != 0 {
		t.Fatalf("keys %q args %q", f.keys, f.args)
	}
	f.reply = runtime.ArrayValue(runtime.IntValue(2))
	if _, err := shapes.New(f).Stats(context.Background(), shapes.StatsKeys{H: "h"}); !errors.Is(err, runtime.ErrUnexpectedReply) {
		t.Fatalf("short tuple: err = %v", err)
	}
}

func TestStep(t *testing.T) {
	f := &fake{reply: runtime.IntValue(10)}
	got, err := job.New(f).Step(context.Background(), job.StepKeys{Job: "j"})
	if err != nil || got != job.StepDone || got.String() != "Done" || job.StepReply(3).String() != "3" {
		t.Fatalf("Step = %v, %v", got, err)
	}
	f.reply = runtime.IntValue(-2)
	if _, err := job.New(f).Step(context.Background(), job.StepKeys{Job: "j"}); !errors.Is(err, job.ErrGone) {
		t.Fatalf("Step -2: err = %v", err)
	}
	f.reply = runtime.StringValue("TAKEN")
	c, err := job.New(f).Claim(context.Background(), job.ClaimKeys{Job: "j"}, job.ClaimArgs{Worker: "w"})
	if err != nil || c != job.ClaimTaken || c.String() != "Taken" {
		t.Fatalf("Claim = %v, %v", c, err)
	}
}

// TestPark: a ---@return none method returns only the error of a
// declared failure; any other reply, a nil, a string, an array or an
// integer that is not a declared code, is discarded.
func TestPark(t *testing.T) {
	f := &fake{}
	for _, reply := range []runtime.Value{runtime.IntValue(3), runtime.IntValue(-4), runtime.Nil, runtime.StringValue("OK"), runtime.ArrayValue(runtime.IntValue(-5))} {
		f.reply = reply
		if err := job.New(f).Park(context.Background(), job.ParkKeys{Job: "j"}, job.ParkArgs{At: 1700000000000}); err != nil {
			t.Fatalf("Park with reply %v: err = %v", reply, err)
		}
	}
	if len(f.keys) != 1 || f.keys[0] != "j" || len(f.args) != 1 || f.args[0] != "1700000000000" {
		t.Fatalf("keys %q args %q", f.keys, f.args)
	}
	f.reply = runtime.IntValue(-5)
	if err := job.New(f).Park(context.Background(), job.ParkKeys{Job: "j"}, job.ParkArgs{At: 1}); !errors.Is(err, job.ErrMissingParent) {
		t.Fatalf("Park -5: err = %v", err)
	}
}
`

// keysBehaviourTest runs next to the generated keyed package: the key
// constructors build the declared layouts, conversion methods fill the
// scripts' Keys, a shared sentinel matches whichever script returns it,
// and neither All nor Errors hands out the package's own slices.
const keysBehaviourTest = `package keyed_test

import (
	"context"
	"errors"
	"testing"

	"example.com/golden/keyed"
	"github.com/luagen/luagen/runtime"
)

type fake struct{ reply runtime.Value }

func (f *fake) EvalSha(context.Context, *runtime.Script, []string, []string) (runtime.Value, error) {
	return f.reply, nil
}
func (f *fake) Eval(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	return f.EvalSha(ctx, s, keys, args)
}
func (f *fake) Load(context.Context, *runtime.Script) error { return nil }

func TestKeys(t *testing.T) {
	k := keyed.LockKeysFor("lock:", "order:42")
	if k.Lock != "lock:{order:42}" || k.Fence != "lock:{order:42}:fence" || k.Latch("u7", 3) != "lock:{order:42}:latch:u7.3" {
		t.Fatalf("LockKeysFor = %+v, latch %q", k, k.Latch("u7", 3))
	}
	if got := k.Renew(); got != (keyed.RenewKeys{Lock: k.Lock, Fence: k.Fence}) {
		t.Fatalf("Renew() = %+v", got)
	}
	for _, ks := range [][]string{{k.Lock, k.Fence, k.Latch("u7", -1)}, {keyed.UserKeysFor("9").Profile, keyed.UserKeysFor("9").Seen("mon")}} {
		if err := runtime.CheckSlots("t", ks); err != nil {
			t.Fatal(err)
		}
	}
	if u := keyed.UserKeysFor("9"); u.Profile != "{9}:profile" || u.Seen("mon") != "{9}:seen:mon" {
		t.Fatalf("UserKeysFor = %+v", u)
	}
}

func TestSharedError(t *testing.T) {
	f := &fake{reply: runtime.IntValue(-2)}
	s := keyed.New(f)
	k := keyed.LockKeysFor("p", "n")
	_, err1 := s.Acquire(context.Background(), keyed.AcquireKeys{Lock: k.Lock, Fence: k.Fence, Latch: k.Latch("o", 1)}, keyed.AcquireArgs{Owner: "o"})
	_, err2 := s.Renew(context.Background(), k.Renew(), keyed.RenewArgs{Owner: "o"})
	if !errors.Is(err1, keyed.ErrGone) || !errors.Is(err2, keyed.ErrGone) {
		t.Fatalf("errors %v, %v", err1, err2)
	}
	var ce *runtime.CodeError
	if !errors.As(err2, &ce) || ce.Script() != "keyed" || ce.Name() != "Gone" || ce.Reply() != "-2" || ce.Desc() != "the lock is gone" {
		t.Fatalf("CodeError %v", ce)
	}
	all := keyed.All()
	all[0] = nil
	if keyed.All()[0] != keyed.AcquireScript() || len(keyed.AcquireScript().Errors()) != 2 {
		t.Fatal("All or Errors shares its slice")
	}
}
`

// goCommand skips t under -short, and otherwise returns the go command
// and this module's root, for tests that build generated code in a
// module of their own.
func goCommand(t *testing.T) (goBin, root string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the go command")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	root, err = filepath.Abs("..")
	require.NoError(t, err)
	return goBin, root
}

// TestGoldenCompiles writes every golden package into a temporary module
// that uses this module through a replace directive, then runs go vet and
// go test there: the expected output must build, pass vet, and behave.
func TestGoldenCompiles(t *testing.T) {
	goBin, root := goCommand(t)
	dir := t.TempDir()
	gomod := "module example.com/golden\n\ngo 1.26.0\n\nrequire github.com/luagen/luagen v0.0.0\n\nreplace github.com/luagen/luagen => " + root + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
	for _, file := range goldenFiles(t, "golden") {
		a, err := txtar.ParseFile(file)
		require.NoError(t, err)
		pkg := archiveConfig(a).Package
		require.NoError(t, os.MkdirAll(filepath.Join(dir, pkg), 0o755))
		for _, f := range a.Files {
			if strings.HasSuffix(f.Name, ".go") {
				require.NoError(t, os.WriteFile(filepath.Join(dir, pkg, f.Name), f.Data, 0o644))
			}
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "shapes", "behaviour_test.go"), []byte(behaviourTest), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "keyed", "behaviour_test.go"), []byte(keysBehaviourTest), 0o644))
	for _, args := range [][]string{{"vet", "./..."}, {"test", "./..."}} {
		cmd := exec.Command(goBin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "GOPROXY=off", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), out)
	}
}
