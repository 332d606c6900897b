package runtime

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
)

// ReplyError is an error reply from the server (a RESP simple or blob error),
// as an [Executor] returns it: the text without the leading '-' and without
// a leading "ERR " (rueidis strips it, so every executor does, and messages
// compare equal whichever executor produced them). "-ERR OUT_OF_STOCK" and
// "-OUT_OF_STOCK" both arrive as Msg "OUT_OF_STOCK".
type ReplyError struct {
	Msg string
}

func (e *ReplyError) Error() string { return e.Msg }

// Code returns the error code: the first word of the message (e.g.
// "OUT_OF_STOCK" for "OUT_OF_STOCK 3 left"), after dropping a leading "ERR "
// should an executor have kept one.
func (e *ReplyError) Code() string {
	m := strings.TrimPrefix(e.Msg, "ERR ")
	if i := strings.IndexByte(m, ' '); i >= 0 {
		return m[:i]
	}
	return m
}

// ErrNilContext is returned, with nothing sent, by every call of this
// package that takes a context.Context ([Script.Exec] and so every
// generated method, [Batch.Send], [Preload], [Script.Load], [Library.Load])
// when it is given a nil one. Pass context.TODO() where there is none.
// (database/sql and net/http panic on a nil Context; here a nil one
// reaching rueidis or a go-redis goroutine would panic where the caller
// cannot recover.)
var ErrNilContext = errors.New("runtime: nil context.Context (pass context.TODO() where there is none)")

// ErrNilExecutor is returned, with nothing sent, by a call on a nil
// [Executor]: a method of a zero generated Scripts value (build it with
// the package's New), or [Queue], [Preload] or [Script.Load] given nil.
var ErrNilExecutor = errors.New("runtime: nil Executor (build Scripts with the generated package's New)")

// usable is the check every entry point makes before it sends anything.
func usable(ctx context.Context, e Executor) error {
	switch {
	case ctx == nil:
		return ErrNilContext
	case e == nil:
		return ErrNilExecutor
	}
	if r, ok := e.(*RueidisExecutor); ok && r == nil {
		return ErrNilExecutor // a nil *RueidisExecutor in a non-nil Executor
	}
	return nil
}

// mustNotBeNil panics with a message naming the constructor and its
// argument when v is nil or a nil pointer: a constructor given nil fails
// at once, where the mistake is, not at the first call deep in a client.
func mustNotBeNil(v any, what string) {
	if v == nil {
		panic(what + " is nil")
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		panic(fmt.Sprintf("%s is a nil %T", what, v))
	}
}

// IsNoScript reports whether err is the server's NOSCRIPT reply to EVALSHA
// ("NOSCRIPT No matching script. Please use EVAL."): an error reply whose
// code is NOSCRIPT. Some proxies and older servers prefix it with "ERR ", so
// that is stripped first (the same rule as rueidis.IsNoScript after
// redis/rueidis#152). A reply ending the way Redis ends an error raised
// inside a script (" script: <sha1>, on @user_script:N.") is not NOSCRIPT,
// whatever it starts with: the script ran. Error replies a script returns
// are told apart by [Script.Body], which marks those that start with
// NOSCRIPT.
func IsNoScript(err error) bool {
	var re *ReplyError
	if !errors.As(err, &re) {
		return false
	}
	return strings.HasPrefix(strings.TrimPrefix(re.Msg, "ERR "), "NOSCRIPT") && !raisedSuffix(re.Msg)
}

// ScriptError is a runtime error raised while a script ran: a failed
// redis.call, error(), or a Lua error such as indexing nil. Redis reports the
// script line as "@user_script:N"; since [Script.Body] keeps every line of
// the .lua file where it is, Line is the line in File. When the script
// inlines other files (---@include), File and Line name the file the line
// came from ([Script.Position]), e.g. lua/lock/lib/draw.lua:7 for an error
// raised in a helper. Err is the server's reply, unchanged (also through
// Unwrap); Error leaves out the parts of it File and Line repeat.
type ScriptError struct {
	Script string // Go name, e.g. "stock.Deduct"
	File   string // the .lua file holding Line (the script's or an included one), relative to the module root
	Line   int    // 1-based line in File; 0 when the server did not say
	Err    *ReplyError
}

// Error is "file.lua:line: Script: message", e.g. "lua/x.lua:14: x.Allow:
// attempt to compare nil with number", with the message as [ScriptError.Message]
// gives it.
func (e *ScriptError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Script, e.Message())
	}
	return fmt.Sprintf("%s: %s: %s", e.File, e.Script, e.Message())
}

// Redis 7 wraps an error raised inside a script (script_lua.c,
// luaErrorInformationDiscard and luaCallFunction) as
// "user_script:14: attempt to compare nil with number script: <sha1>, on
// @user_script:14." (the prefix only for Lua errors, not for a failed
// redis.call); the line is in the prefix and the suffix, and File and Line
// say it better.
var (
	userScriptPrefix = regexp.MustCompile(`^user_(?:script|function):[0-9]+: `)
	userScriptSuffix = regexp.MustCompile(` ?script: (?:[0-9a-f]{40}, on @user_script|\w+, on @user_function):[0-9]+\.$`)
)

// Message returns the server's text without the line and SHA1 that Redis
// wraps it in, which Error replaces with File and Line: "attempt to compare
// nil with number" for "user_script:14: attempt to compare nil with number
// script: 66c7…, on @user_script:14.". The reply as sent stays in Err.Msg.
func (e *ScriptError) Message() string {
	m := strings.TrimPrefix(e.Err.Msg, "ERR ")
	m = userScriptPrefix.ReplaceAllString(m, "")
	if t := userScriptSuffix.ReplaceAllString(m, ""); t != "" {
		m = t
	}
	return m
}

// Unwrap returns the server's reply.
func (e *ScriptError) Unwrap() error { return e.Err }

// scriptLine extracts N from the "... on @user_script:N." suffix Redis 7
// appends to errors raised inside a script (script_lua.c, luaErrorInformationDiscard).
func scriptLine(msg string) (int, bool) {
	return lineAfter(msg, "@user_script:")
}

// lineAfter returns the number that follows the last marker in msg.
func lineAfter(msg, marker string) (int, bool) {
	i := strings.LastIndex(msg, marker)
	if i < 0 {
		return 0, false
	}
	s := msg[i+len(marker):]
	j := 0
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	n, err := strconv.Atoi(s[:j])
	return n, err == nil
}

// CodeError is the sentinel for a reply a script header declares as a
// failure with "---@error VALUE Name description". Generated packages export
// one per error name (stock.ErrOutOfStock) and callers test them with
// errors.Is; errors.As with a *CodeError reads what it says. Create one with
// [NewCodeError]: its fields are unexported, so no caller can change the
// sentinel for everyone else.
type CodeError struct {
	script string
	name   string
	reply  string
	desc   string
}

// NewCodeError returns the sentinel for a declared failure reply. script is
// the Go name of the script that declares it ("stock.Deduct") or, for an
// error several scripts of one package declare, the package ("stock"); name
// is the error's name ("OutOfStock"), reply the declared VALUE ("-1", "nil"
// or an error code such as "OUT_OF_STOCK") and desc the header's
// description. Generated code calls it once per sentinel, at package
// initialisation; a wrapper written by hand does the same and lists the
// sentinel in [ScriptSpec].Errors, so that [Script.Exec] returns it when
// the script replies reply.
func NewCodeError(script, name, reply, desc string) *CodeError {
	return &CodeError{script: script, name: name, reply: reply, desc: desc}
}

// Script returns the Go name of the script that declares the error, e.g.
// "stock.Deduct", or the package name, e.g. "stock", when several scripts of
// the package share it.
func (e *CodeError) Script() string { return e.script }

// Name returns the error's name from the header, e.g. "OutOfStock".
func (e *CodeError) Name() string { return e.name }

// Reply returns the declared reply VALUE: an integer such as "-1", "nil",
// or an error code such as "OUT_OF_STOCK" that the script sends with
// redis.error_reply.
func (e *CodeError) Reply() string { return e.reply }

// Desc returns the header's description, e.g. "stock is lower than qty";
// it may be empty.
func (e *CodeError) Desc() string { return e.desc }

func (e *CodeError) Error() string {
	if e.desc == "" {
		return fmt.Sprintf("%s: %s (reply %s)", e.script, e.name, e.reply)
	}
	return fmt.Sprintf("%s: %s: %s (reply %s)", e.script, e.name, e.desc, e.reply)
}

// codeReplyError is a declared error-reply code together with the text the
// script sent; it matches its sentinel with errors.Is and keeps the detail.
type codeReplyError struct {
	code  *CodeError
	reply *ReplyError
}

func (e *codeReplyError) Error() string { return e.code.Error() + ": " + e.reply.Msg }
func (e *codeReplyError) Unwrap() []error {
	return []error{e.code, e.reply}
}

// ErrUnexpectedReply matches every [*DecodeError] with errors.Is.
var ErrUnexpectedReply = errors.New("unexpected script reply")

// DecodeError reports a reply whose shape does not match the script's
// declared ---@return type, e.g. a string where int64 was declared. It means
// the .lua file and its header disagree.
type DecodeError struct {
	Script string // Go name, e.g. "stock.Deduct"
	Want   string // the declared type, e.g. "int64"
	Got    Value  // the reply as received
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("%s: unexpected reply %s, want %s", e.Script, e.Got, e.Want)
}

// Is reports whether target is [ErrUnexpectedReply].
func (e *DecodeError) Is(target error) bool { return target == ErrUnexpectedReply }

// ErrBadArg matches every [*BadArgError] with errors.Is.
var ErrBadArg = errors.New("argument out of its bound")

// BadArgError reports an argument a generated method refused before
// sending anything: a value outside the bound its ---@arg line declares
// ([1,1000], {a|b}), or outside what keeps the script's arithmetic exact
// for a number the script turns into a Lua number (a double, exact only
// up to 2^53; the bound is the one luagen's analysis assumed, e.g.
// [-4503599627370496,4503599627370496] for an int64 in limit - n - 1).
// Nothing was sent: no script ran, nothing was queued.
type BadArgError struct {
	Script string // Go name, e.g. "stock.Deduct"
	Arg    string // the argument's name in the header, e.g. "qty"
	Value  any    // the value given: an int64, a float64, a string or a time.Time
	// Bound is the bound as the header writes it: "[1,1000]" (for a
	// time.Time, of its Unix time in the wire unit; for a string, of its
	// length in bytes) or "{a|b|c}".
	Bound string
}

func (e *BadArgError) Error() string {
	return fmt.Sprintf("%s: arg %s = %v is outside its bound %s; nothing was sent", e.Script, e.Arg, e.Value, e.Bound)
}

// Is reports whether target is [ErrBadArg].
func (e *BadArgError) Is(target error) bool { return target == ErrBadArg }
