package luagenimpl

import (
	"errors"
	"sync"

	"github.com/luagen/luagen/runtime"
)

// CallPool recycles the buffer in which a generated method builds one
// call: its KEYS and ARGV (one array of strings) and the digits of its
// numbers ([AppendInt] and friends). A warm pool makes the call allocate
// nothing of its own, as raw rueidis allocates nothing for constant
// arguments. T is the method's call type, a struct of arrays; the zero
// CallPool is ready to use and safe for concurrent use.
//
// The strings of a call share T's memory, so a buffer goes back to the
// pool only when nothing can read them any more: the executor is a
// [runtime.ArgReleaser] that says so, and the call ended with the
// server's answer or before anything was sent. After a transport failure
// or an ended context the command may still sit in the client's write
// queue (rueidis writes it later, and does not recycle its own command
// either), so that buffer is left to the garbage collector.
type CallPool[T any] struct{ p sync.Pool }

// Get returns a zeroed call buffer, recycled or new.
func (p *CallPool[T]) Get() *T {
	if c, ok := p.p.Get().(*T); ok {
		return c
	}
	return new(T)
}

// Recycle gives back c, which held a call that ended with err (what
// [runtime.Script.Exec] returned), when releases is true (the call's
// executor releases its calls' arguments: [ReleasesArgs], which generated
// code asks once, when its Scripts is made, rather than on every call)
// and err says that no command is in flight: nil, an error reply or a
// declared error (*[runtime.ReplyError], which *[runtime.ScriptError]
// wraps, or *[runtime.CodeError] in its chain), or a refusal made before
// sending (*[runtime.CrossSlotError], [runtime.ErrNilContext],
// [runtime.ErrNilExecutor]). c is zeroed first, so that the pool keeps no
// caller's keys alive.
func (p *CallPool[T]) Recycle(releases bool, c *T, err error) {
	if !releases || !answered(err) {
		return
	}
	var zero T
	*c = zero
	p.p.Put(c)
}

// answered reports whether a call that ended with err left no command in
// flight: the server answered it, or nothing was sent.
func answered(err error) bool {
	if err == nil || err == runtime.ErrNilContext || err == runtime.ErrNilExecutor {
		return true
	}
	var (
		reply *runtime.ReplyError // *ScriptError unwraps to one
		code  *runtime.CodeError
		cross *runtime.CrossSlotError
	)
	return errors.As(err, &reply) || errors.As(err, &code) || errors.As(err, &cross)
}

// ReleasesArgs reports whether e, or the first executor it wraps that
// implements [runtime.ArgReleaser] (through an Unwrap method, as
// [runtime.Coalescer] and [runtime.WithoutShebang]'s executor have, and
// as runtime asks for its own capabilities), says that it releases its
// calls' arguments once a call has returned: whether [CallPool.Recycle]
// may reuse a call's buffer. Generated constructors ask it once per
// Scripts.
func ReleasesArgs(e runtime.Executor) bool {
	for e != nil {
		// A non-generic assertion: its call site caches the answer.
		if r, ok := e.(runtime.ArgReleaser); ok {
			return r.ReleasesArgs()
		}
		u, ok := e.(interface{ Unwrap() runtime.Executor })
		if !ok {
			return false
		}
		e = u.Unwrap()
	}
	return false
}
