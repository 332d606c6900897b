package luatest

import "strings"

// KeysCheck says how the keys a script's commands touch are checked
// against the KEYS the script was given. Redis Cluster needs every key in
// KEYS to route a script, and refuses a command on a key of another slot
// ("Script attempted to access a non local key in a cluster node"); a
// single server never complains, which is how undeclared keys slip into
// production. The check fails the command like that error would, naming
// the key and the .lua line.
type KeysCheck uint8

const (
	// KeysDeclared (the default) requires every key to be one of KEYS, as
	// the Redis documentation requires of scripts, or to be built from one:
	// to begin with a KEYS value's text up to and including its hash tag
	// (the first '{' and the first '}' after it, with text between them,
	// the rule of runtime.Slot). With KEYS[1] = "bull:{q}:wait" it accepts
	// "bull:{q}:1" and "bull:{q}:1:logs", as BullMQ's scripts build job
	// keys from the queue's prefix: such a key has the declared key's tag
	// at the same place, so it shares the slot by construction, on any
	// cluster. It refuses "bull:q:1", a key with the same tag after other
	// text ("other:{q}:1": it shares the slot because the tag's value
	// happens to match, not because it was built from a declared key, which
	// is the mistake the check exists to catch), any key built from a KEYS
	// value without a hash tag, and keys built inside the script that
	// happen to share the slot today.
	KeysDeclared KeysCheck = iota
	// KeysSameSlot only requires every key to hash to the slot of KEYS[1],
	// which is what Redis Cluster itself enforces.
	KeysSameSlot
	// KeysUnchecked turns the check off.
	KeysUnchecked
)

// faults are the injected failures.
type faults struct {
	calls     int               // script calls so far
	nth       map[int]string    // call number → error reply
	byCommand map[string]string // command (lower case) → error reply
	lost      int               // replies still to lose
}

func (f *faults) count() int {
	f.calls++
	return f.calls
}

func (f *faults) injected(n int, cmd string) (string, bool) {
	if msg, ok := f.nth[n]; ok {
		delete(f.nth, n)
		return msg, true
	}
	msg, ok := f.byCommand[cmd]
	return msg, ok
}

func (f *faults) takeLostReply() bool {
	if f.lost == 0 {
		return false
	}
	f.lost--
	return true
}

// FailCall makes the n-th redis.call/redis.pcall from now (1 is the next
// one, counting across scripts) answer the error reply errMsg instead of
// running, e.g. FailCall(2, "OOM command not allowed when used memory >
// 'maxmemory'."). An errMsg without an upper-case code word gets "ERR ".
// redis.call raises it, redis.pcall returns it, like any error reply.
func (r *Redis) FailCall(n int, errMsg string) {
	r.lock()
	defer r.mu.Unlock()
	if r.faults.nth == nil {
		r.faults.nth = map[int]string{}
	}
	r.faults.nth[r.faults.calls+n] = errorText(errMsg)
}

// FailCommand makes every call of command (e.g. "SET") from a script
// answer the error reply errMsg until [Redis.ClearFaults].
func (r *Redis) FailCommand(command, errMsg string) {
	r.lock()
	defer r.mu.Unlock()
	if r.faults.byCommand == nil {
		r.faults.byCommand = map[string]string{}
	}
	r.faults.byCommand[strings.ToLower(command)] = errorText(errMsg)
}

// LoseReply makes the next EvalSha or Eval run its script to the end and
// keep its effects, then return [ErrReplyLost] instead of the reply: the
// "did my write happen?" case after a connection drop.
func (r *Redis) LoseReply() {
	r.lock()
	defer r.mu.Unlock()
	r.faults.lost++
}

// ClearFaults removes every injected fault.
func (r *Redis) ClearFaults() {
	r.lock()
	defer r.mu.Unlock()
	r.faults.nth, r.faults.byCommand, r.faults.lost = nil, nil, 0
}

// errorText makes msg a full error reply text: "ERR msg" unless it
// starts with an upper-case code word such as "OOM" or "READONLY".
func errorText(msg string) string {
	code, _, _ := strings.Cut(msg, " ")
	if code != "" && strings.ToUpper(code) == code && strings.Trim(code, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == "" {
		return msg
	}
	return "ERR " + msg
}
