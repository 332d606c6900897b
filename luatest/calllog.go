package luatest

import (
	"fmt"
	"strings"

	"github.com/luagen/luagen/luatest/resp"
	"github.com/luagen/luagen/runtime"
)

// Call is one redis.call or redis.pcall a script made, as [Redis.Calls]
// reports it.
type Call struct {
	Command   string     // as the script wrote it, e.g. "GET"
	Args      []string   // the arguments after the command, as sent
	Reply     resp.Reply // what the command answered (Kind resp.Error for an error)
	File      string     // the .lua file when the script came through the Executor; "" for raw EVAL
	Line      int        // the script line of the call
	Protected bool       // redis.pcall rather than redis.call
	// Mode is the command the script or function making the call ran
	// with: runtime.ModeEvalSha (EVALSHA or EVALSHA_RO), runtime.ModeEval
	// (EVAL, EVAL_RO) or runtime.ModeFCall (FCALL, FCALL_RO), whether it
	// came through the Executor methods, Do, Command or the wire. So a test
	// sees runtime.Script.Exec's NOSCRIPT fallback, or a library's call
	// run as FCALL.
	Mode runtime.Mode
}

// Value returns the reply as a [runtime.Value], or the error reply as a
// *[runtime.ReplyError] ("ERR " stripped).
func (c Call) Value() (runtime.Value, error) { return FromRESP(c.Reply) }

// where is "file.lua:12", or "user_script:12" when the file is unknown.
func (c Call) where() string {
	f := c.File
	if f == "" {
		f = chunkName
	}
	return fmt.Sprintf("%s:%d", f, c.Line)
}

// String renders the call as "deduct.lua:27: GET seckill:{42}:stock →
// "5"".
func (c Call) String() string {
	return fmt.Sprintf("%s: %s → %s", c.where(), c.CommandLine(), c.Reply)
}

// CommandLine is the command and its arguments joined by spaces, e.g.
// "DECRBY seckill:{42}:stock 2": handy for asserting which commands ran.
func (c Call) CommandLine() string {
	return strings.TrimSpace(c.Command + " " + strings.Join(c.Args, " "))
}

// logCall adds c to the call log: a ring of callsMax calls once full,
// where c takes the oldest one's place.
func (r *Redis) logCall(c Call) {
	if r.callsMax <= 0 {
		return
	}
	if len(r.calls) < r.callsMax {
		r.calls = append(r.calls, c)
		return
	}
	r.calls[r.callsOldest] = c
	r.callsOldest = (r.callsOldest + 1) % len(r.calls)
}

// Calls returns the redis.call and redis.pcall calls scripts made since the
// server was created or [Redis.ResetCalls] was called, oldest first: all
// of them, or the most recent ones when there were more than the log keeps
// (see [WithCallLog]).
func (r *Redis) Calls() []Call {
	r.lock()
	defer r.mu.Unlock()
	return append(append([]Call(nil), r.calls[r.callsOldest:]...), r.calls[:r.callsOldest]...)
}

// CommandLines returns [Call.CommandLine] of every call in [Redis.Calls].
func (r *Redis) CommandLines() []string {
	calls := r.Calls()
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.CommandLine()
	}
	return out
}

// ResetCalls empties the call log, the published events and the log lines.
func (r *Redis) ResetCalls() {
	r.lock()
	defer r.mu.Unlock()
	r.calls, r.events, r.logs = nil, nil, nil
	r.callsOldest = 0
}

// Events returns the messages scripts published (PUBLISH, SPUBLISH), in order.
func (r *Redis) Events() []Event {
	r.lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// Logs returns the redis.log lines scripts wrote, in order.
func (r *Redis) Logs() []LogEntry {
	r.lock()
	defer r.mu.Unlock()
	return append([]LogEntry(nil), r.logs...)
}
