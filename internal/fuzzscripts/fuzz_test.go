package fuzzscripts_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/luagen/luagen/internal/fuzzscripts"
	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/runtime/luagenimpl"
)

var cluster redistest.SharedCluster

func TestMain(m *testing.M) {
	code := m.Run()
	cluster.Stop()
	os.Exit(code)
}

// target is one place the generated methods run: the scripts, and how to
// read a counter key there.
type target struct {
	name    string
	s       *fuzzscripts.Scripts
	counter func(t *testing.T, key string) int64
}

// FuzzGeneratedMethods calls the generated Record, Spread and Count methods with
// random keys (any bytes, any number, same slot or not) and random
// arguments of every type, on a 3+3 Redis Cluster through rueidis and on
// luatest. Every call must return without panicking; every error must be
// typed (*runtime.ReplyError, possibly inside *runtime.ScriptError,
// *runtime.CrossSlotError or *runtime.DecodeError); a call refused for its
// slots must send nothing, and any other call must run its script exactly
// once — also when the script's own error reply reads NOSCRIPT. The two
// targets must give the same script-made error text. The seeds under
// testdata/fuzz/FuzzGeneratedMethods run with every `go test`.
func FuzzGeneratedMethods(f *testing.F) {
	noscript := "NOSCRIPT No matching script. Please use EVAL."
	for _, s := range []struct {
		tag, runs, other string
		same             bool
		nOthers          uint8
		fail             string
		nRest            uint16
		blob             []byte
	}{
		{tag: "t", runs: "a", other: "b", same: true, nOthers: 2},
		{runs: "a", other: "b", nOthers: 1},
		{runs: "", other: "", nOthers: 0},
		{tag: "t", runs: "a", same: true, fail: noscript},
		{tag: "t", runs: "a", same: true, fail: "ERR " + noscript},
		{tag: "t", runs: "a", same: true, fail: "-NOSCRIPT x"},
		{tag: "t", runs: "a", same: true, fail: "LUAGEN NOSCRIPT x"},
		{tag: "t", runs: "a", same: true, fail: "NOSCRIPT\r\nx"},
		{tag: "}{", runs: "\xff\xfe", other: "\x00", same: true, nOthers: 3},
		{tag: "t", runs: "a", same: true, nRest: 5000, blob: bytes.Repeat([]byte{0, 0xff, '\n'}, 1<<15)},
	} {
		f.Add(s.tag, s.runs, s.other, s.same, s.nOthers, s.fail, "text\x00", s.blob, int64(-7), 1.5, true, int64(1500), int64(1700000000), s.nRest)
	}
	c := cluster.Get(f)
	cl := c.Client(f)
	offline := luatest.Start(f)
	targets := []target{
		{"cluster", fuzzscripts.New(runtime.NewRueidisExecutor(cl)), func(t *testing.T, key string) int64 {
			n, err := cl.Do(context.Background(), cl.B().Get().Key(key).Build()).AsInt64()
			if err != nil && !rueidis.IsRedisNil(err) {
				t.Fatalf("GET %q: %v", key, err)
			}
			return n
		}},
		{"luatest", fuzzscripts.New(offline), func(t *testing.T, key string) int64 {
			v, err := offline.Do("GET", key)
			if err != nil {
				t.Fatalf("GET %q: %v", key, err)
			}
			n, _ := strconv.ParseInt(v.Str, 10, 64)
			return n
		}},
	}
	f.Fuzz(func(t *testing.T, tag, runs, other string, same bool, nOthers uint8, fail, text string, blob []byte,
		n int64, fl float64, on bool, waitMs, atSec int64, nRest uint16) {
		keys := fuzzscripts.RecordKeys{Runs: runs, Others: make([]string, nOthers%8)}
		for i := range keys.Others {
			keys.Others[i] = other + strconv.Itoa(i)
		}
		if same {
			keys.Runs = "{" + tag + "}" + runs
			for i := range keys.Others {
				keys.Others[i] = "{" + tag + "}" + keys.Others[i]
			}
		}
		args := fuzzscripts.RecordArgs{Fail: fail, Text: text, Blob: blob, N: n, F: fl, On: on,
			Wait: time.Duration(waitMs) * time.Millisecond, At: time.Unix(atSec, 0), Rest: make([]string, nRest%6000)}
		for i := range args.Rest {
			args.Rest[i] = "r"
		}
		allKeys := append([]string{keys.Runs}, keys.Others...)
		crossSlot := runtime.CheckSlots("", allKeys) != nil
		spreadKeys := fuzzscripts.SpreadKeys{First: keys.Runs, Second: other}
		spreadCross := runtime.Slot(spreadKeys.First) != runtime.Slot(spreadKeys.Second)
		ctx := context.Background()

		var failText []string // the script-made error text on each target
		for _, tg := range targets {
			before := tg.counter(t, keys.Runs)
			echo, err := tg.s.Record(ctx, keys, args)
			ran := tg.counter(t, keys.Runs) - before
			checkTyped(t, tg.name, err)
			switch {
			case crossSlot:
				if !errors.Is(err, runtime.ErrCrossSlot) || ran != 0 {
					t.Fatalf("%s: keys %q in different slots: err %v, ran %d times", tg.name, allKeys, err, ran)
				}
				continue
			case ran != 1:
				t.Fatalf("%s: Record ran %d times in one call (err %v)", tg.name, ran, err)
			case fail != "":
				var re *runtime.ReplyError
				if !errors.As(err, &re) {
					t.Fatalf("%s: fail %q: got %v, want the script's error reply", tg.name, fail, err)
				}
				failText = append(failText, re.Msg)
			case err != nil:
				t.Fatalf("%s: Record: %v", tg.name, err)
			default:
				want := fuzzscripts.Echo{Runs: before + 1, Keys: int64(len(allKeys)), Args: int64(8 + len(args.Rest)),
					Text: text, Blob: blob, N: luagenimpl.FormatInt(n), F: luagenimpl.FormatFloat(fl), On: luagenimpl.FormatBool(on),
					Wait: luagenimpl.FormatDuration(args.Wait, time.Millisecond), At: luagenimpl.FormatTime(args.At, time.Second)}
				if len(want.Blob) == 0 {
					want.Blob = echo.Blob // nil and empty are the same reply
				}
				if !echoEqual(echo, want) {
					t.Fatalf("%s: Record echoed %+v, want %+v", tg.name, echo, want)
				}
			}

			before = tg.counter(t, spreadKeys.First)
			got, err := tg.s.Spread(ctx, spreadKeys)
			ran = tg.counter(t, spreadKeys.First) - before
			checkTyped(t, tg.name, err)
			if tg.name == "cluster" && spreadCross {
				var cse *runtime.CrossSlotError
				if !errors.As(err, &cse) || !cse.OnCluster || ran != 0 {
					t.Fatalf("cluster: Spread over slots %d and %d: err %v, ran %d times", runtime.Slot(spreadKeys.First), runtime.Slot(spreadKeys.Second), err, ran)
				}
				continue
			}
			wantRan := int64(1)
			if spreadKeys.First == spreadKeys.Second {
				wantRan = 2
			}
			if err != nil || ran != wantRan || got != before+1 {
				t.Fatalf("%s: Spread(%q): %d, %v; ran %d times", tg.name, spreadKeys, got, err, ran)
			}
		}
		for _, tg := range targets {
			got, err := tg.s.Count(ctx, fuzzscripts.CountKeys{Keys: keys.Others}, fuzzscripts.CountArgs{Args: args.Rest})
			checkTyped(t, tg.name, err)
			if runtime.CheckSlots("", keys.Others) != nil {
				if !errors.Is(err, runtime.ErrCrossSlot) {
					t.Fatalf("%s: Count(%q): %v, want ErrCrossSlot", tg.name, keys.Others, err)
				}
				continue
			}
			if err != nil || len(got) != 2 || got[0] != int64(len(keys.Others)) || got[1] != int64(len(args.Rest)) {
				t.Fatalf("%s: Count(%d keys, %d args): %v, %v", tg.name, len(keys.Others), len(args.Rest), got, err)
			}
		}
		if len(failText) == 2 && failText[0] != failText[1] {
			t.Fatalf("fail %q: the cluster answered %q, luatest %q", fail, failText[0], failText[1])
		}
	})
}

func echoEqual(a, b fuzzscripts.Echo) bool {
	return a.Runs == b.Runs && a.Keys == b.Keys && a.Args == b.Args && a.Text == b.Text && bytes.Equal(a.Blob, b.Blob) &&
		a.N == b.N && a.F == b.F && a.On == b.On && a.Wait == b.Wait && a.At == b.At
}

// checkTyped fails t unless err is nil or one of runtime's error types.
func checkTyped(t *testing.T, where string, err error) {
	t.Helper()
	var (
		re  *runtime.ReplyError
		cse *runtime.CrossSlotError
		de  *runtime.DecodeError
	)
	if err == nil || errors.As(err, &re) || errors.As(err, &cse) || errors.As(err, &de) {
		return
	}
	t.Fatalf("%s: untyped error %T: %v", where, err, err)
}
