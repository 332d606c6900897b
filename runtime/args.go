package runtime

// ArgReleaser is implemented by an [Executor] that keeps no key or arg,
// nor any string sharing their memory (a reply or an error echoing an
// argument), once EvalSha, Eval or FCall has returned the server's answer,
// as io.Writer must not keep p. Generated methods then build their calls
// in recycled buffers
// ([github.com/luagen/luagen/runtime/luagenimpl.CallPool]). On any other
// executor (a test fake that records its calls, say) every call's keys and
// args are its own and stay valid. The executors of this module implement
// it: rueidis and go-redis copy the arguments onto the wire, luatest
// copies what a script could keep, and wrappers such as [Coalescer]
// answer, through their Unwrap method, for the executor they wrap.
type ArgReleaser interface {
	// ReleasesArgs reports whether the executor keeps nothing of a call's
	// keys and args past its answer.
	ReleasesArgs() bool
}
