package runtime

import (
	"sort"
	"strconv"
	"strings"

	"github.com/luagen/luagen/internal/replycode"
)

// The server answers EVALSHA with "NOSCRIPT No matching script. Please use
// EVAL." when the script is not in its cache, and [Script.Exec] then sends
// EVAL; cluster clients follow "MOVED <slot> <addr>" and "ASK ..." to
// another node and send the command again; clients retry on TRYAGAIN,
// CLUSTERDOWN, LOADING, READONLY and more (internal/replycode lists every
// code and who reads it). A script can reply with the same text itself — a
// literal, a copy of the server's text, or an ARGV echoed through
// redis.error_reply — and that reply must not be taken for the server's,
// or the script runs again in one call (without limit, for a MOVED that
// names a node whose answer is a real MOVED back). Two kinds of
// script-made error replies exist (script_lua.c, Redis 7.0.15):
//
//   - returned: `return redis.error_reply(s)` or `return {err=s}`. The
//     server sends s unchanged (luaReplyToRedisReply), so it can equal the
//     server's own reply byte for byte. NewScript wraps the body so that
//     such a reply is marked with [scriptReplyMark] on its way out (see
//     [wrapBody]); Exec removes the mark before the caller sees the reply.
//   - raised: error(s), error({err=s}), a failing redis.call. Redis' error
//     handler records the line, and luaCallFunction appends
//     " script: <sha1>, on @user_script:<line>." to the text; [IsNoScript]
//     rejects a text with that suffix. Clients do not: rueidis and go-redis
//     still read the first word, so error({err=ARGV[1]}) or
//     error(ARGV[1], 0) can send a client a MOVED or a TRYAGAIN of the
//     script's making. The wrapper cannot see raised errors (replacing
//     error would move the frame Redis' error handler reads the line
//     from, and scripts have no debug library to compute it again), so gen
//     reports every error(...) whose text is not a literal and every way
//     to raise that it cannot follow (error as a value, _G, loadstring;
//     gen/doc.go, "Error replies").
//
// A body given to NewScript without luagen's check can still raise an
// error table with a metatable whose __newindex drops the handler's
// source and line fields, and so pass for NOSCRIPT or a redirection: Exec
// then sends it again once (EVAL; in function mode at most functionLoads
// loads, then EVAL), go-redis follows at most MaxRedirects redirections,
// and rueidis follows them until ctx ends unless
// ClusterOption.MaxMovedRedirections is set.

// scriptReplyMark is the error code the wrapped body puts in front of a
// returned error reply that clients or the runtime would otherwise read as
// the server's own (or that already starts with the mark, so removing one
// mark always gives back the script's own text). It shows only to a client
// that runs the wrapped body itself, e.g. redis-cli EVALSHA.
const scriptReplyMark = "LUAGEN"

// markedCodes is the Lua table constructor of the codes the wrapped body
// marks: [replycode.Reserved], the mark itself, and "max" for go-redis'
// retry on "ERR max number of clients reached".
var markedCodes = func() string {
	codes := []string{scriptReplyMark, "max"}
	for c := range replycode.Reserved {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	var b strings.Builder
	b.WriteByte('{')
	for i, c := range codes {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(c + "=1")
	}
	b.WriteByte('}')
	return b.String()
}()

// maxCodeLen is the length of the longest code in markedCodes.
var maxCodeLen = func() int {
	n := len(scriptReplyMark)
	for c := range replycode.Reserved {
		n = max(n, len(c))
	}
	return n
}()

// wrapPrologue and wrapEpilogue enclose the script body in a function whose
// result is inspected before the chunk returns it. The prologue is put on
// the body's first code line and the epilogue on a line after its last, so
// every line of the .lua file keeps its number in "@user_script:N". r is a
// local of the outer chunk, invisible to the body. Only the first result
// matters: Redis takes one result from a script (lua_pcall(lua,0,1,...)).
//
// The epilogue reads err with rawget, as luaReplyToRedisReply does, and only
// a string err makes an error reply there (a number does not). It takes the
// first word of letters (after a leading "ERR ", which rueidis drops and
// go-redis' typed errors see through) and marks the reply when a code is a
// prefix of that word: rueidis tests byte prefixes ("MOVEDX 1 a:1" is a
// MOVED to it), so prefixes of 3 to maxCodeLen letters are looked up in a
// table built only when the reply is an error. It also marks a text that
// contains "-READONLY", which go-redis' shouldRetry looks for anywhere (as
// "-READONLY You can't write against a read only replica"): that one is
// marked "LUAGEN%" and its '%' and '-' are written %25 and %2D, so the
// phrase is gone from the wire and [unmark] restores it. (The gsub call
// is in parentheses: gopher-lua, which luatest runs the body in, does not
// cut a call's results to one inside "..".) A success reply costs two type tests; an error reply one
// match and up to maxCodeLen-2 short subs and lookups. type, rawget,
// rawset, math.min and the string methods cannot be replaced by the body:
// Redis 7 makes the global table and the library tables read-only.
var (
	wrapPrologue = "local r = (function(%s) "
	wrapEpilogue = "end)(%s) " + replyCheck("") + "return r"
)

// replyCheck is the Lua code that marks the reply r as the comment above
// describes; extra is more "elseif cond then mark" branches, tried after
// the -READONLY one (function mode adds "Function not found").
func replyCheck(extra string) string {
	return "if type(r) == 'table' then local e = rawget(r, 'err') " +
		"if type(e) == 'string' then local w = e:match('^%a+') " +
		"if w == 'ERR' then w = e:match('^ (%a+)', 4) end " +
		"if e:find('-READONLY', 1, true) then rawset(r, 'err', '" + scriptReplyMark + "% ' .. " +
		"(e:gsub('[%%%-]', {['%'] = '%25', ['-'] = '%2D'}))) " + extra + "elseif w then local c = " + markedCodes + " " +
		"for n = 3, math.min(#w, " + strconv.Itoa(maxCodeLen) + ") do if c[w:sub(1, n)] then " +
		"rawset(r, 'err', '" + scriptReplyMark + " ' .. e) break end end end end end "
}

// wrapBody returns body as [NewScript] sends it (see the comment above
// [scriptReplyMark]). A first line starting with "#!" is the Redis 7 shebang:
// Redis skips it up to, not including, its line feed (luaCreateFunction), so
// it stays first and unchanged and the prologue starts line 2. A shebang with
// no line feed is left alone: Redis refuses it ("Invalid script shebang").
//
// The wrapping function takes "..." only when the body contains "...": in
// Lua 5.1 (LUA_COMPAT_VARARG) a function(...) whose own code does not use
// "..." builds an arg table on every call, and its hidden local arg takes one
// of the 200 local slots. Redis calls a script with no arguments, so "..."
// is empty either way.
//
// Effects a script can see: error(msg, 2) at the top level of the body now
// names the epilogue's line (the caller is the wrapper, not Redis); a
// compile error after a misplaced "return" may be worded differently ("'end'
// expected" for "'<eof>' expected"), and one Lua reports at the end of the
// text (an unfinished long string or comment, a missing "end") names the
// epilogue's line instead of the file's last; the wrapper uses one level of
// the Lua parser's nesting limit (LUAI_MAXCCALLS, 200). Locals (200 per
// function), upvalues (60) and the reply are as in the unwrapped script:
// Redis takes only the first result of a script, and so does the wrapper.
func wrapBody(body string) string {
	return wrapSource(body, wrapPrologue, wrapEpilogue, "...")
}

// wrapSource returns source with its shebang line (if any) first and its
// code written by [writeWrapped]; a shebang line alone is returned as it is.
// [wrapBody] and [coalesceBody] build their bodies with it.
func wrapSource(source, prologue, epilogue, vararg string) string {
	head, code, ok := splitShebang(source)
	if !ok {
		return source
	}
	var b strings.Builder
	b.Grow(len(source) + len(prologue) + len(epilogue) + 8)
	b.WriteString(head)
	writeWrapped(&b, code, prologue, epilogue, vararg)
	return b.String()
}

// writeWrapped writes code between prologue and epilogue, each with its
// "%s" (if any) replaced by vararg when code uses "..." (see [wrapBody]),
// and by nothing otherwise.
func writeWrapped(b *strings.Builder, code, prologue, epilogue, vararg string) {
	params := ""
	if strings.Contains(code, "...") {
		params = vararg
	}
	b.WriteString(strings.Replace(prologue, "%s", params, 1))
	b.WriteString(code)
	if code != "" && !strings.HasSuffix(code, "\n") {
		// The body may end in a comment: the epilogue needs its own line.
		b.WriteByte('\n')
	}
	b.WriteString(strings.Replace(epilogue, "%s", params, 1))
}

// unmark returns the script's own error reply for a reply the wrapped body
// marked, and re unchanged otherwise. Like every executor it drops a leading
// "ERR ", so the text equals what the unwrapped script would have produced.
func unmark(re *ReplyError) *ReplyError {
	m := strings.TrimPrefix(re.Msg, "ERR ")
	rest, ok := strings.CutPrefix(m, scriptReplyMark+" ")
	if !ok {
		if rest, ok = strings.CutPrefix(m, scriptReplyMark+"% "); !ok {
			return re
		}
		rest = unescape.Replace(rest)
	}
	return &ReplyError{Msg: strings.TrimPrefix(rest, "ERR ")}
}

// unescape undoes the epilogue's escaping of a reply marked "LUAGEN%".
var unescape = strings.NewReplacer("%2D", "-", "%25", "%")

// raisedSuffix reports whether msg ends the way luaCallFunction (script_lua.c)
// ends an error raised inside a script: " script: <name>, on <source>:<line>.".
func raisedSuffix(msg string) bool {
	i := strings.LastIndex(msg, " script: ")
	return i >= 0 && strings.HasSuffix(msg, ".") && strings.Contains(msg[i:], ", on ")
}

// splitShebang splits a script into its "#!lua ..." line (with its
// newline; "" when there is none) and the code after it. ok is false for
// a script that is a shebang line alone, which has no code to wrap.
func splitShebang(src string) (head, code string, ok bool) {
	if !strings.HasPrefix(src, "#!") {
		return "", src, true
	}
	i := strings.IndexByte(src, '\n')
	if i < 0 {
		return "", src, false
	}
	return src[:i+1], src[i+1:], true
}
