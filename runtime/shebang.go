package runtime

import (
	"context"
	"strings"
	"sync"
)

// WithoutShebang returns an Executor that sends every script with its first
// line turned from a Redis 7 shebang ("#!lua flags=...") into a Lua comment
// ("--!lua flags=..."), keeping line numbers. Use it only for servers that
// reject the shebang: Redis before 7.0 and emulators such as miniredis
// (v2.40 answers "syntax error near '#'"). The script's flags are then not
// enforced by the server; the client-side hash-slot check still is.
func WithoutShebang(e Executor) Executor {
	return &shebangless{inner: e}
}

type shebangless struct {
	inner Executor
	plain sync.Map // *Script → *Script with the shebang commented out
}

func (x *shebangless) plainScript(s *Script) *Script {
	if !strings.HasPrefix(s.source, "#!") {
		return s
	}
	if p, ok := x.plain.Load(s); ok {
		return p.(*Script)
	}
	// Only the body and SHA1 matter to the executor: Exec runs on the
	// original script, which keeps the slot check, retries and error codes.
	// Two first calls racing build equal copies; LoadOrStore keeps one.
	plain := NewScript(ScriptSpec{Name: s.name, File: s.file, Body: "--" + s.source[2:]})
	if s.body != wrapBody(s.source) {
		// A merged-run companion (coalesce_wire.go): comment out its own
		// shebang instead.
		body := "--" + s.body[2:]
		plain = &Script{name: s.name, file: s.file, source: s.source, body: body, sha1: sha1Hex(body)}
	}
	p, _ := x.plain.LoadOrStore(s, plain)
	return p.(*Script)
}

func (x *shebangless) EvalSha(ctx context.Context, s *Script, keys, args []string) (Value, error) {
	return x.inner.EvalSha(ctx, x.plainScript(s), keys, args)
}

func (x *shebangless) Eval(ctx context.Context, s *Script, keys, args []string) (Value, error) {
	return x.inner.Eval(ctx, x.plainScript(s), keys, args)
}

func (x *shebangless) Load(ctx context.Context, s *Script) error {
	return x.inner.Load(ctx, x.plainScript(s))
}

// Unwrap returns the executor x sends to, whose [Hook], server address and
// [ArgReleaser] promise x has.
func (x *shebangless) Unwrap() Executor { return x.inner }
