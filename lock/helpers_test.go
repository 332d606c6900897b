package lock_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/rueidis"
	"go.uber.org/goleak"

	"github.com/luagen/luagen/lock"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if exampleServer != nil {
		exampleServer.Stop()
		_ = os.RemoveAll(exampleServer.Dir)
	}
	if code == 0 {
		// rueidis' cluster client sleeps up to 5 s in a topology refresh it
		// started before Close, and ends it after (as runtime's leak
		// checks allow too): a run that ends with a cluster test sees it.
		if err := goleak.Find(goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*clusterClient)._refresh.func2")); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: goroutines left after the tests: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

var (
	exampleOnce   sync.Once
	exampleServer *redistest.Server
)

// redisAddr returns the address of a redis-server shared by the examples
// (which have no testing.T to start one with), stopped by TestMain.
func redisAddr() string {
	exampleOnce.Do(func() {
		dir, err := os.MkdirTemp("", "lock-examples-")
		if err != nil {
			panic(err)
		}
		if exampleServer, err = redistest.NewServer(dir); err != nil {
			panic(err)
		}
	})
	return exampleServer.Addr
}

// newClient returns a lock Client on rc, closed when t ends (before rc,
// whose cleanup was registered earlier).
func newClient(t testing.TB, rc rueidis.Client, opts ...lock.Option) *lock.Client {
	t.Helper()
	c, err := lock.NewClient(rc, opts...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

func newMutex(t testing.TB, c *lock.Client, name string, opts ...lock.Option) *lock.Mutex {
	t.Helper()
	m, err := lock.New(c, name, opts...)
	if err != nil {
		t.Fatalf("New(%q): %v", name, err)
	}
	return m
}

// errLostReply stands for a reply lost on the way back: the script ran on
// the server, the caller got a connection error.
var errLostReply = errors.New("test: connection reset after the script ran")

// faultExecutor wraps a real executor: it counts calls per script and can
// run a call on the server and then report errLostReply, or fail a call
// without sending it, or hold a call until its context ends.
type faultExecutor struct {
	runtime.Executor

	mu     sync.Mutex
	calls  map[string]int // by script name, e.g. "scripts.Renew"
	faults map[string][]fault
	gates  map[string][]*gate
	onDone func(script string, v runtime.Value, err error)
}

// gate holds one call of a script until the test opens it.
type gate struct {
	mode    gateMode
	reached chan struct{} // closed when the call reaches the gate
	open    chan struct{} // closed by the test
	late    func()        // gateLate: sends the call; run by the test's open
}

type gateMode int

const (
	gateBefore gateMode = iota // hold the call before it is sent
	gateAfter                  // hold the reply of a call that ran
	gateLate                   // report errLostReply at once; send the call when opened
)

type fault int

const (
	pass       fault = iota // send as usual
	lostReply               // run on the server, then report errLostReply
	unsent                  // report errLostReply without sending
	stall                   // run on the server, then wait for ctx to end
	stallFirst              // wait for ctx to end, then return its error without sending
)

func newFaultExecutor(rc rueidis.Client) *faultExecutor {
	return &faultExecutor{Executor: runtime.NewRueidisExecutor(rc), calls: map[string]int{}, faults: map[string][]fault{}, gates: map[string][]*gate{}}
}

// hold gates the next call of script (see gateMode). reached is closed
// when the call gets to the gate; open lets it go on (for gateLate: sends
// it, on the caller's goroutine).
func (f *faultExecutor) hold(script string, mode gateMode) (reached <-chan struct{}, open func()) {
	g := &gate{mode: mode, reached: make(chan struct{}), open: make(chan struct{})}
	f.mu.Lock()
	f.gates[script] = append(f.gates[script], g)
	f.mu.Unlock()
	return g.reached, sync.OnceFunc(func() {
		<-g.reached
		if g.late != nil {
			g.late()
		}
		close(g.open)
	})
}

func (f *faultExecutor) nextGate(script string) *gate {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := f.gates[script]
	if len(q) == 0 {
		return nil
	}
	f.calls[script]++
	f.gates[script] = q[1:]
	return q[0]
}

// inject queues faults for the next calls of script, one per call.
func (f *faultExecutor) inject(script string, fs ...fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults[script] = append(f.faults[script], fs...)
}

func (f *faultExecutor) count(script string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[script]
}

func (f *faultExecutor) next(script string) fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[script]++
	q := f.faults[script]
	if len(q) == 0 {
		return pass
	}
	f.faults[script] = q[1:]
	return q[0]
}

// EvalSha counts and faults one logical call: it falls back to EVAL on
// NOSCRIPT itself, so a fault applies to the send that runs the script.
func (f *faultExecutor) EvalSha(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	return f.do(ctx, s, func() (runtime.Value, error) {
		v, err := f.Executor.EvalSha(ctx, s, keys, args)
		if runtime.IsNoScript(err) {
			v, err = f.Executor.Eval(ctx, s, keys, args)
		}
		return v, err
	})
}

func (f *faultExecutor) do(ctx context.Context, s *runtime.Script, send func() (runtime.Value, error)) (v runtime.Value, err error) {
	if g := f.nextGate(s.Name()); g != nil {
		switch g.mode {
		case gateLate:
			g.late = func() { _, _ = send() }
			close(g.reached)
			return runtime.Value{}, errLostReply
		case gateAfter:
			v, err = send()
		}
		close(g.reached)
		<-g.open
		if g.mode == gateBefore {
			v, err = send()
		}
		return v, err
	}
	switch f.next(s.Name()) {
	case unsent:
		err = errLostReply
	case stallFirst:
		<-ctx.Done()
		err = ctx.Err()
	case lostReply:
		if v, err = send(); err == nil {
			v, err = runtime.Value{}, errLostReply
		}
	case stall:
		v, err = send()
		<-ctx.Done()
		v, err = runtime.Value{}, ctx.Err()
	default:
		v, err = send()
	}
	f.mu.Lock()
	done := f.onDone
	f.mu.Unlock()
	if done != nil {
		done(s.Name(), v, err)
	}
	return v, err
}

// events records a Mutex's events for assertions.
type events struct {
	mu  sync.Mutex
	all []lock.Event
	n   atomic.Int64
	ch  chan lock.Event // optional: every event is also sent here
}

func (e *events) hook(ev lock.Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
	e.n.Add(1)
	if e.ch != nil {
		e.ch <- ev
	}
}

func (e *events) of(kind lock.EventKind) []lock.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []lock.Event
	for _, ev := range e.all {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}
