package runtime

import (
	"errors"
	"sync"
)

// ArgReleaser is implemented by an [Executor] that keeps no key or arg,
// nor any string sharing their memory (a reply or an error echoing an
// argument), once EvalSha, Eval or FCall has returned the server's answer,
// as io.Writer must not keep p. Generated methods then build their calls in
// recycled buffers ([CallPool]). On any other executor (a test fake that
// records its calls, say) every call's keys and args are its own and stay
// valid. The executors of this module implement it: rueidis and go-redis
// copy the arguments onto the wire, luatest copies what a script could
// keep, and wrappers such as [Coalescer] answer, through their Unwrap
// method, for the executor they wrap.
type ArgReleaser interface {
	// ReleasesArgs reports whether the executor keeps nothing of a call's
	// keys and args past its answer.
	ReleasesArgs() bool
}

// CallPool recycles the buffer in which a generated method builds one
// call: its KEYS and ARGV (one array of strings) and the digits of its
// numbers ([AppendInt] and friends). A warm pool makes the call allocate
// nothing of its own, as raw rueidis allocates nothing for constant
// arguments. T is the method's call type, a struct of arrays; the zero
// CallPool is ready to use and safe for concurrent use. It is for
// generated code.
//
// The strings of a call share T's memory, so a buffer goes back to the
// pool only when nothing can read them any more: the executor is an
// [ArgReleaser] that says so, and the call ended with the server's answer
// or before anything was sent. After a transport failure or an ended
// context the command may still sit in the client's write queue (rueidis
// writes it later, and does not recycle its own command either), so that
// buffer is left to the garbage collector.
type CallPool[T any] struct{ p sync.Pool }

// Get returns a zeroed call buffer, recycled or new.
func (p *CallPool[T]) Get() *T {
	if c, ok := p.p.Get().(*T); ok {
		return c
	}
	return new(T)
}

// Put gives back c, which held a call made on e that ended with err (what
// [Script.Exec] returned), when e is an [ArgReleaser] that releases its
// calls' arguments and err says that no command is in flight: nil, an
// error reply or a declared error (*[ReplyError], which *[ScriptError]
// wraps, or *[CodeError] in its chain), or a refusal made before sending
// (*[CrossSlotError], [ErrNilContext], [ErrNilExecutor]). c is zeroed
// first, so that the pool keeps no caller's keys alive.
func (p *CallPool[T]) Put(e Executor, c *T, err error) {
	if !answered(err) || !releasesArgs(e) {
		return
	}
	var zero T
	*c = zero
	p.p.Put(c)
}

// answered reports whether a call that ended with err left no command in
// flight: the server answered it, or nothing was sent.
func answered(err error) bool {
	if err == nil || err == ErrNilContext || err == ErrNilExecutor {
		return true
	}
	var (
		reply *ReplyError // *ScriptError unwraps to one
		code  *CodeError
		cross *CrossSlotError
	)
	return errors.As(err, &reply) || errors.As(err, &code) || errors.As(err, &cross)
}

// releasesArgs reports whether e is an [ArgReleaser] that releases its
// calls' arguments.
func releasesArgs(e Executor) bool {
	// In place first, for the call site's own cache (see hookOf).
	if r, ok := e.(ArgReleaser); ok {
		return r.ReleasesArgs()
	}
	r, ok := capability[ArgReleaser](e)
	return ok && r.ReleasesArgs()
}
