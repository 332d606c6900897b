package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/internal/exectest"
	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/runtime/goredis"
	"github.com/luagen/luagen/runtime/luagenimpl"
)

// build is one binary of a service in function mode: its package's scripts
// as that build's generated code declares them. Which counts its runs in
// KEYS[1] and answers the build's version, so every reply proves whose
// code ran; Peek does the same read-only (FCALL_RO).
type build struct {
	version     string
	lib         *runtime.Library
	which, peek *runtime.Script
}

func newBuild(pkg, version string) build {
	which := runtime.NewScript(runtime.ScriptSpec{Name: pkg + ".Which", File: "lua/" + pkg + "/which.lua",
		Body: "#!lua\n--- Which counts a call and names the build.\nredis.call('INCR', KEYS[1])\nreturn '" + version + "'\n"})
	peek := runtime.NewScript(runtime.ScriptSpec{Name: pkg + ".Peek", File: "lua/" + pkg + "/peek.lua", ReadOnly: true,
		Body: "#!lua flags=no-writes\nreturn {redis.call('GET', KEYS[1]), '" + version + "'}\n"})
	lib := runtime.NewLibrary(runtime.LibrarySpec{Name: pkg, Scripts: []*runtime.Script{which, peek}})
	return build{version: version, lib: lib, which: which, peek: peek}
}

// call runs Which and checks that this build's code answered.
func (b build) call(ctx context.Context, e runtime.Executor, key string) error {
	v, err := b.which.Exec(ctx, e, []string{key}, nil)
	if err == nil && v.Str != b.version {
		err = fmt.Errorf("build %s got the reply of build %q", b.version, v.Str)
	}
	return err
}

// libraries renders FUNCTION LIST of the package's libraries on a node
// (luatest's through its Value, whose String keeps nested replies).
func libraries(e runtime.Executor, do func(args ...string) string, pkg string) string {
	if r, ok := e.(*luatest.Redis); ok {
		return r.MustDo("FUNCTION", "LIST", "LIBRARYNAME", pkg+"_*").String()
	}
	return do("FUNCTION", "LIST", "LIBRARYNAME", pkg+"_*")
}

// Builds of one package from different scripts load side by side, each
// calling its own library in any order (a forward deploy, a rollback, two
// versions alternating) without a load after the first; a load keeps
// LibraryVersionsKept versions and removes the oldest-loaded others; a
// build whose version was removed loads it again on its next call, which
// runs once; libraries luagen did not make are never touched.
func TestLibraryVersionsSideBySide(t *testing.T) {
	for _, row := range executors {
		t.Run(row.name, func(t *testing.T) {
			ctx := context.Background()
			e, do := row.open(t)
			c := &fcallCounting{FunctionExecutor: e.(runtime.FunctionExecutor)}
			a, b := newBuild("dep", "A"), newBuild("dep", "B")
			has := func(x build) bool { return strings.Contains(libraries(e, do, "dep"), x.lib.Name()) }

			require.NoError(t, a.call(ctx, c, "{d}a"))
			require.NoError(t, b.call(ctx, c, "{d}b"))
			assert.Equal(t, 2, c.loads)
			for range 3 { // alternating, as in a rolling deploy
				require.NoError(t, a.call(ctx, c, "{d}a"))
				require.NoError(t, b.call(ctx, c, "{d}b"))
			}
			assert.Equal(t, 2, c.loads, "both libraries stay loaded")
			assert.True(t, has(a) && has(b))
			assert.Equal(t, "4", do("GET", "{d}a"))
			assert.Equal(t, a.lib.Hash(), do("FCALL_RO", a.lib.Name()+"_version", "0"))
			v, err := a.peek.Exec(ctx, c, []string{"{d}a"}, nil)
			require.NoError(t, err)
			assert.Equal(t, "A", v.Array[1].Str, "FCALL_RO of A's own function")

			// Libraries luagen did not make, one of them named like a
			// version, are never removed.
			foreign := "dep_0123456789abcdef"
			assert.Equal(t, foreign, do("FUNCTION", "LOAD", "#!lua name="+foreign+"\nredis.register_function('not_luagen', function() return 1 end)"))
			assert.Equal(t, "dep", do("FUNCTION", "LOAD", "#!lua name=dep\nredis.register_function('dep_other', function() return 2 end)"))

			// LibraryVersionsKept more builds, each loaded once: a node keeps the
			// LibraryVersionsKept most recently loaded.
			var later []build
			for i := range runtime.LibraryVersionsKept {
				x := newBuild("dep", "C"+strconv.Itoa(i))
				require.NoError(t, x.call(ctx, c, "{d}c"))
				later = append(later, x)
			}
			// dep_* also lists the foreign dep_0123456789abcdef, not dep.
			list := libraries(e, do, "dep")
			assert.Equal(t, runtime.LibraryVersionsKept+1, strings.Count(list, "library_name"), list)
			for _, x := range later[len(later)-runtime.LibraryVersionsKept:] {
				assert.True(t, has(x), "the newest are kept: %s", x.version)
			}
			assert.False(t, has(a) || has(b), "the oldest are gone")
			assert.Contains(t, list, foreign)
			assert.Equal(t, "1", do("FCALL", "not_luagen", "0"))
			assert.Equal(t, "2", do("FCALL", "dep_other", "0"))

			// A rollback to A: its library was removed, so its next call
			// loads it again and runs once; later calls need no load.
			loads := c.loads
			require.NoError(t, a.call(ctx, c, "{d}a"))
			require.NoError(t, a.call(ctx, c, "{d}a"))
			assert.Equal(t, loads+1, c.loads)
			assert.Equal(t, "6", do("GET", "{d}a"), "every call ran once")
			assert.True(t, has(a))
			assert.Equal(t, runtime.LibraryVersionsKept+1, strings.Count(libraries(e, do, "dep"), "library_name"))

			// Preload of a version the node holds changes nothing.
			require.NoError(t, runtime.Preload(ctx, c, a.lib.Scripts()...))
			assert.Equal(t, runtime.LibraryVersionsKept+1, strings.Count(libraries(e, do, "dep"), "library_name"))
		})
	}
}

// Two loaders of different builds prune at the same moment: each deletes
// what it counts as old, and a library the other deleted first ("Library
// not found") costs nothing; the server ends with the kept number, both
// new builds among them.
func TestLibraryPruneRace(t *testing.T) {
	for _, row := range executors {
		t.Run(row.name, func(t *testing.T) {
			ctx := context.Background()
			e, do := row.open(t)
			fe := e.(runtime.FunctionExecutor)
			for i := range runtime.LibraryVersionsKept {
				require.NoError(t, newBuild("race", "old"+strconv.Itoa(i)).lib.Load(ctx, fe))
			}
			x, y := newBuild("race", "X"), newBuild("race", "Y")
			var wg sync.WaitGroup
			for _, b := range []build{x, y} {
				wg.Go(func() { assert.NoError(t, b.lib.Load(ctx, fe)) })
			}
			wg.Wait()
			list := libraries(e, do, "race")
			assert.Equal(t, runtime.LibraryVersionsKept, strings.Count(list, "library_name"), list)
			assert.Contains(t, list, x.lib.Name())
			assert.Contains(t, list, y.lib.Name())
			require.NoError(t, x.call(ctx, fe, "{r}x"))
			require.NoError(t, y.call(ctx, fe, "{r}y"))
		})
	}
}

// noLoad is a FunctionExecutor whose library loads fail, as under ACLs
// that forbid FUNCTION or with a node down during the load.
type noLoad struct {
	pipeFunctions
	loads atomic.Int64
}

func (n *noLoad) LoadLibrary(context.Context, *runtime.Library) error {
	n.loads.Add(1)
	return errors.New("NOPERM this user has no permissions to run the 'function|load' command")
}

func (n *noLoad) LoadLibraryFor(ctx context.Context, l *runtime.Library, _ string) error {
	return n.LoadLibrary(ctx, l)
}

// A library that cannot be loaded does not fail calls: each runs the
// build's own script with EVALSHA/EVAL, once, singly and in a batch;
// Preload reports the load error.
func TestLibraryUnloadableRunsScript(t *testing.T) {
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		ctx := context.Background()
		srv := redistest.Start(t)
		e := &noLoad{pipeFunctions: k.Single(t, srv).(pipeFunctions)}
		a := newBuild("nl", "A")
		require.NoError(t, a.call(ctx, e, "{n}a"))
		assert.Equal(t, int64(1), e.loads.Load())

		var b runtime.Batch
		var fs []*runtime.Future[runtime.Value]
		for range 4 {
			fs = append(fs, runtime.Queue(&b, e, a.which, []string{"{n}a"}, nil, luagenimpl.Raw))
		}
		require.NoError(t, b.Send(ctx))
		for _, f := range fs {
			v, err := f.Result()
			require.NoError(t, err)
			assert.Equal(t, "A", v.Str)
		}
		assert.Equal(t, "5", srv.Do(t, "GET", "{n}a"), "every call ran once")
		assert.Equal(t, int64(2), e.loads.Load(), "one load for the batch")
		assert.Contains(t, srv.Do(t, "INFO", "commandstats"), "cmdstat_fcall:calls=5,")
		assert.ErrorContains(t, runtime.Preload(ctx, e, a.lib.Scripts()...), "NOPERM")
	})
}

// The rolling-deploy test of issue 18: builds A and B of one package (and
// then C) call concurrently, in every order and with a rollback, while a
// deployer keeps loading other builds so that A's and B's libraries are
// pruned under them; every call must succeed and answer its own build's
// version, and every call must have run exactly once. Single node and
// the 3+3 cluster, both executors.
func TestRollingDeploy(t *testing.T) {
	run := func(t *testing.T, exec runtime.Executor, prefix string) {
		ctx := context.Background()
		e := &loadCounting{FunctionExecutor: exec.(runtime.FunctionExecutor)}
		a, b, c := newBuild("roll", "A"), newBuild("roll", "B"), newBuild("roll", "C")
		var (
			mu    sync.Mutex
			calls = map[string]int{} // per key: successful calls
		)
		// phase runs the builds concurrently, 4 goroutines each, for d (and,
		// with churn, until enough deploys have run).
		phase := func(name string, d time.Duration, churn bool, builds ...build) {
			loads := e.loads.Load()
			var deploys atomic.Int64
			stop := make(chan struct{})
			var wg sync.WaitGroup
			var failed, ok atomic.Int64
			for _, bd := range builds {
				for g := range 4 {
					key := fmt.Sprintf("%s-%s-%d}", prefix, bd.version, g)
					wg.Go(func() {
						n := 0
						for {
							select {
							case <-stop:
								mu.Lock()
								calls[key] += n
								mu.Unlock()
								return
							default:
							}
							if err := bd.call(ctx, e, key); err != nil {
								failed.Add(1)
								t.Errorf("%s: build %s: %v", name, bd.version, err)
							} else {
								n++
								ok.Add(1)
							}
						}
					})
				}
			}
			if churn {
				// Another deploy every few ms, each a new build: the
				// live builds' libraries are pruned again and again.
				wg.Go(func() {
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						case <-time.After(20 * time.Millisecond):
						}
						assert.NoError(t, newBuild("roll", name+"-D"+strconv.Itoa(i)).lib.Load(ctx, exec))
						deploys.Add(1)
					}
				})
			}
			time.Sleep(d)
			// With churn, the phase lasts until the deploys have pruned
			// every live build's library at least twice over, however
			// slowly a busy machine runs them (bounded, so that a stuck
			// deploy fails below instead of hanging).
			for end := time.Now().Add(time.Minute); churn && deploys.Load() <= int64(2*runtime.LibraryVersionsKept) && time.Now().Before(end); {
				time.Sleep(10 * time.Millisecond)
			}
			close(stop)
			wg.Wait()
			reloads := e.loads.Load() - loads
			t.Logf("%s: %d calls, %d failed; %d deploys, %d loads by the live builds", name, ok.Load(), failed.Load(), deploys.Load(), reloads)
			assert.Positive(t, ok.Load(), name)
			if churn {
				assert.Greater(t, deploys.Load(), int64(2*runtime.LibraryVersionsKept), name)
				assert.Positive(t, reloads, "%s: the live builds' libraries were removed under them, and loaded again", name)
			}
		}
		phase("A alone", 300*time.Millisecond, false, a)
		phase("A and B", time.Second, false, a, b)
		phase("A and B, deploys pruning them", time.Second, true, a, b)
		phase("rollback: A alone", 300*time.Millisecond, false, a)
		phase("A and C, then B again", time.Second, true, a, c, b)
		// Every successful call ran exactly once.
		count := newBuild("roll", "count")
		for key, n := range calls {
			v, err := count.peek.Exec(ctx, runtime.WithoutShebang(exec), []string{key}, nil)
			require.NoError(t, err)
			assert.Equal(t, strconv.Itoa(n), v.Array[0].Str, key)
		}
	}
	t.Run("single", func(t *testing.T) {
		exectest.Run(t, func(t *testing.T, k exectest.Kind) {
			srv := redistest.Start(t)
			run(t, k.Single(t, srv), "{roll")
			n := strings.Count(srv.Do(t, "FUNCTION", "LIST", "LIBRARYNAME", "roll_*"), "library_name")
			assert.LessOrEqual(t, n, runtime.LibraryVersionsKept, "the server holds a bounded number of versions")
		})
	})
	t.Run("cluster", func(t *testing.T) {
		c := sharedCluster(t)
		exectest.Run(t, func(t *testing.T, k exectest.Kind) {
			t.Cleanup(func() {
				for _, n := range c.Nodes {
					if role(t, n) == "primary" {
						n.Do(t, "FUNCTION", "FLUSH")
					}
				}
			})
			run(t, k.Cluster(t, c), "{roll-"+k.Name+"-"+strconv.FormatInt(time.Now().UnixNano(), 36))
			for _, n := range c.Nodes {
				if role(t, n) == "primary" {
					count := strings.Count(n.Do(t, "FUNCTION", "LIST", "LIBRARYNAME", "roll_*"), "library_name")
					assert.LessOrEqual(t, count, runtime.LibraryVersionsKept, n.Addr)
				}
			}
		})
	})
}

// loadCounting counts library loads, safe for concurrent use.
type loadCounting struct {
	runtime.FunctionExecutor
	loads atomic.Int64
}

func (c *loadCounting) LoadLibrary(ctx context.Context, l *runtime.Library) error {
	c.loads.Add(1)
	return c.FunctionExecutor.LoadLibrary(ctx, l)
}

func (c *loadCounting) LoadLibraryFor(ctx context.Context, l *runtime.Library, key string) error {
	c.loads.Add(1)
	return c.FunctionExecutor.LoadLibraryFor(ctx, l, key)
}

// FUNCTION FLUSH every 5 ms and every 1 ms while 16 goroutines call, singly
// and in batches: no call fails (no "Function not found", no load error),
// every reply is the build's own and every call ran once.
func TestFunctionFlushStorm(t *testing.T) {
	for _, every := range []time.Duration{5 * time.Millisecond, time.Millisecond} {
		t.Run(every.String(), func(t *testing.T) {
			exectest.Run(t, func(t *testing.T, k exectest.Kind) {
				ctx := context.Background()
				srv := redistest.Start(t)
				e := k.Single(t, srv)
				a := newBuild("storm", "A")
				stop := make(chan struct{})
				var wg sync.WaitGroup
				counts := make([]int, 16)
				for g := range counts {
					key := "{s}" + strconv.Itoa(g)
					wg.Go(func() {
						for {
							select {
							case <-stop:
								return
							default:
							}
							if g%4 == 0 { // a batch of 3
								var b runtime.Batch
								var fs []*runtime.Future[runtime.Value]
								for range 3 {
									fs = append(fs, runtime.Queue(&b, e, a.which, []string{key}, nil, luagenimpl.Raw))
								}
								if err := b.Send(ctx); err != nil {
									t.Errorf("batch: %v", err)
								}
								for _, f := range fs {
									if v, err := f.Result(); err == nil && v.Str == "A" {
										counts[g]++
									}
								}
								continue
							}
							if err := a.call(ctx, e, key); err != nil {
								t.Errorf("call: %v", err)
							} else {
								counts[g]++
							}
						}
					})
				}
				flushes := 0
				for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); flushes++ {
					time.Sleep(every)
					srv.Do(t, "FUNCTION", "FLUSH")
				}
				close(stop)
				wg.Wait()
				total := 0
				for g, n := range counts {
					total += n
					assert.Equal(t, strconv.Itoa(n), srv.Do(t, "GET", "{s}"+strconv.Itoa(g)), "every call ran once")
				}
				t.Logf("%d calls, %d flushes", total, flushes)
				assert.Positive(t, total)
			})
		})
	}
}

// A burst of first calls after a deploy loads the library once per wave,
// not once per call: concurrent calls on one executor wait for the load in
// flight (there were 825 FUNCTION LOADs for 1,000 callers on rueidis).
func TestLibraryFirstCallBurst(t *testing.T) {
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		ctx := context.Background()
		srv := redistest.Start(t)
		e := &loadCounting{FunctionExecutor: k.Single(t, srv).(runtime.FunctionExecutor)}
		b := newBuild("burst", "A")
		start := make(chan struct{})
		var wg sync.WaitGroup
		for g := range 200 {
			wg.Go(func() {
				<-start
				assert.NoError(t, b.call(ctx, e, "{burst}"+strconv.Itoa(g)))
			})
		}
		close(start)
		wg.Wait()
		loads := e.loads.Load()
		t.Logf("%d callers: %d loads, %d FUNCTION LOADs on the server", 200, loads, srv.CommandCalls(t, "function|load"))
		assert.Positive(t, loads)
		assert.Less(t, loads, int64(20), "callers share the load in flight")
		assert.Less(t, srv.CommandCalls(t, "function|load"), 20)
	})
}

// A stalled primary of another shard does not fail or hold a call's
// first load: the call loads the library on its own node only, as an
// EVAL-mode call needs nothing of other shards either. (A load on every
// primary waited for the stalled one, and failed every first call with a
// deadline under rueidis' or go-redis' 5 s.)
func TestLibraryFirstCallWithStalledShard(t *testing.T) {
	c := redistest.StartCluster(t)
	stalled, _, err := c.PrimaryOf(runtime.Slot("{stall}"))
	require.NoError(t, err)
	require.NoError(t, stalled.Signal(syscall.SIGSTOP))
	t.Cleanup(func() { _ = stalled.Signal(syscall.SIGCONT) })
	// A key on another shard, and the third shard's primary.
	var key string
	var own, third *redistest.Server
	for i := 0; key == ""; i++ {
		k := "{other-" + strconv.Itoa(i) + "}"
		if p, _, err := c.PrimaryOf(runtime.Slot(k)); err == nil && p != stalled {
			key, own = k, p
		}
	}
	for _, n := range c.Nodes {
		if n != stalled && n != own && role(t, n) == "primary" {
			third = n
		}
	}
	require.NotNil(t, third)
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		e := k.Cluster(t, c)
		b := newBuild("stall"+k.Name, "A")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		before := third.CommandCalls(t, "function|load")
		require.NoError(t, b.call(ctx, e, key+k.Name))
		require.NoError(t, ctx.Err())
		assert.Equal(t, before, third.CommandCalls(t, "function|load"), "the call loaded on its own node only")
		v, err := b.peek.Exec(ctx, e, []string{key + k.Name}, nil)
		require.NoError(t, err)
		assert.Equal(t, "1", v.Array[0].Str, "the call ran once")
	})
}

// A node that refuses FUNCTION LIST and FUNCTION DELETE (ACLs) cannot
// bound its versions: Load (and so Preload) says so with
// ErrLibraryPrune, not IsTransient, while the library is loaded and every
// call runs as a function.
func TestLibraryPruneRefused(t *testing.T) {
	srv := redistest.Start(t)
	srv.Do(t, "ACL", "SETUSER", "deployer", "on", ">pw", "~*", "&*", "+@all", "-function|list", "-function|delete")
	for _, k := range []struct {
		name string
		open func(t *testing.T) runtime.FunctionExecutor
	}{
		{"rueidis", func(t *testing.T) runtime.FunctionExecutor {
			c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr}, Username: "deployer", Password: "pw"})
			require.NoError(t, err)
			t.Cleanup(c.Close)
			return runtime.NewRueidisExecutor(c)
		}},
		{"goredis", func(t *testing.T) runtime.FunctionExecutor {
			c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "deployer", Password: "pw"})
			t.Cleanup(func() { c.Close() })
			return goredis.NewExecutor(c)
		}},
	} {
		t.Run(k.name, func(t *testing.T) {
			ctx := context.Background()
			e := k.open(t)
			srv.Do(t, "FUNCTION", "FLUSH")
			var last build
			for i := range runtime.LibraryVersionsKept + 2 {
				last = newBuild("acl", k.name+strconv.Itoa(i))
				require.NoError(t, last.call(ctx, e, "{acl}"+k.name), "calls run whatever pruning does")
				err := last.lib.Load(ctx, e)
				require.NoError(t, err, "already loaded: nothing to prune")
			}
			next := newBuild("acl", k.name+"-next")
			err := next.lib.Load(ctx, e)
			require.ErrorIs(t, err, runtime.ErrLibraryPrune)
			assert.Contains(t, err.Error(), "NOPERM")
			assert.False(t, runtime.IsTransient(err))
			require.NoError(t, next.call(ctx, e, "{acl}"+k.name))
			assert.Equal(t, strconv.Itoa(runtime.LibraryVersionsKept+3), srv.Do(t, "GET", "{acl}"+k.name), "every call ran once")
			assert.Equal(t, runtime.LibraryVersionsKept+3, strings.Count(srv.Do(t, "FUNCTION", "LIST", "LIBRARYNAME", "acl_*"), "library_name"))
			assert.Zero(t, srv.CommandCalls(t, "eval")+srv.CommandCalls(t, "evalsha"), "no EVAL fallback was needed")
		})
	}
}

// A load stuck on one shard (writes paused: FUNCTION LOAD waits, FCALL_RO
// answers "Function not found") holds no call on another shard: calls
// share a load only with calls routed to the same slot. (One load per
// executor held the other shard's call until its deadline.)
func TestLibraryLoadStuckOnOtherShard(t *testing.T) {
	c := sharedCluster(t)
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		e := k.Cluster(t, c)
		b := newBuild("stuck"+k.Name, "A")
		var keyA, keyB string
		var paused *redistest.Server
		for i := 0; keyB == ""; i++ {
			key := "{stuck-" + k.Name + strconv.Itoa(i) + "}"
			p, _, err := c.PrimaryOf(runtime.Slot(key))
			require.NoError(t, err)
			switch {
			case paused == nil:
				keyA, paused = key, p
			case p != paused:
				keyB = key
			}
		}
		paused.Do(t, "CLIENT", "PAUSE", "20000", "WRITE") // unpaused as soon as the other shard's call is back
		t.Cleanup(func() { paused.Do(t, "CLIENT", "UNPAUSE") })
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resA := make(chan error, 1)
		go func() {
			_, err := b.peek.Exec(ctx, e, []string{keyA}, nil)
			resA <- err
		}()
		// Wait until A's call is loading (its FUNCTION LOAD is queued
		// behind the pause).
		require.Eventually(t, func() bool {
			return strings.Contains(paused.Do(t, "CLIENT", "LIST"), "cmd=function|load")
		}, 10*time.Second, 5*time.Millisecond)
		v, err := b.peek.Exec(ctx, e, []string{keyB}, nil)
		require.NoError(t, err)
		assert.Equal(t, "A", v.Array[1].Str)
		select {
		case err := <-resA:
			t.Fatalf("the call on the paused shard ended first (%v): the other shard's call waited for its load", err)
		default:
		}
		paused.Do(t, "CLIENT", "UNPAUSE")
		require.NoError(t, <-resA)
	})
}

// The load time a node records is that node's clock, not another node's
// seen by the same process: a process that loaded on a node whose clock
// is an hour ahead does not make its next load elsewhere look newest.
func TestLibraryLoadTimeIsTheNodes(t *testing.T) {
	ctx := context.Background()
	ahead := luatest.Start(t, luatest.WithTime(time.Now().Add(time.Hour)))
	srv := redistest.Start(t)
	e := exectest.Rueidis.Single(t, srv).(runtime.FunctionExecutor)
	x := newBuild("clock", "X")
	require.NoError(t, x.lib.Load(ctx, ahead))
	require.NoError(t, x.lib.Load(ctx, e))
	for i := range runtime.LibraryVersionsKept {
		require.NoError(t, newBuild("clock", "v"+strconv.Itoa(i)).lib.Load(ctx, e))
	}
	list := srv.Do(t, "FUNCTION", "LIST", "LIBRARYNAME", "clock_*")
	assert.NotContains(t, list, x.lib.Name(), "X, loaded first on this node, went first")
	assert.Equal(t, runtime.LibraryVersionsKept, strings.Count(list, "library_name"))
}
