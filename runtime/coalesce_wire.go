package runtime

import (
	"slices"
	"strconv"
	"strings"
)

// A merged run is one EVALSHA of a script's companion (see [Coalescer]):
// the script's code wrapped in a function of KEYS and ARGV, followed by a
// loop that calls it once per merged call, each with its own KEYS and ARGV
// tables, under xpcall with Redis' own error handler. Everything the loop
// needs travels in the one command, in one of two shapes. When every call
// has the same keys and as many arguments (one SKU's buyers, say), the
// keys go once:
//
//	KEYS = the keys of every call
//	ARGV = n, budget (µs), "same", #ARGV, ARGV₁..., ARGVₙ...
//
// and otherwise each call's:
//
//	KEYS = the keys of call 1, then of call 2, ...
//	ARGV = n, budget (µs), "each", #KEYS₁, #ARGV₁, ..., #KEYSₙ, #ARGVₙ, ARGV₁..., ARGVₙ...
//
// (Every string of a command costs the server an allocation while it reads
// the command and a Lua string while it builds KEYS and ARGV: the first
// shape halves their number for a script like stock's Deduct.)
//
// and the reply is an array of n+1 elements: one per call, then a status
// string of n bytes, byte c telling what element c is:
//
//	'r'  the call returned the element, converted as Redis converts a
//	     script's reply (a returned error reply is an error element,
//	     marked as [wrapBody] marks it)
//	'n'  the call returned nil (the element is 0)
//	'e'  the call raised an error: the element is {err, src, line}, the
//	     err, source and line fields of __redis__err__handler's table
//	     (false when absent), from which [raisedReply] rebuilds the text
//	     Redis would have sent for that call alone
//	'-'  the call was not started: the run had used its time budget (the
//	     element is 0; the [Coalescer] sends the call again in the next run)
//
// A value goes bare, not in a table of its own: one table less per call is
// a measurable share of a short script's cost in the run.
//
// The budget is checked with TIME before call 2 and every eighth call after
// (10, 18, ...): TIME costs about as much as a short script's own command,
// so a run stops starting calls at most seven calls after it has taken
// budget µs. Redis' busy-script limit (busy-reply-threshold, 5 s by
// default) stays far away whatever one call costs, as long as one call
// alone stays far below it.
//
// A call's KEYS and ARGV are built with unpack, which sizes each table
// once; calls with more than 4,000 keys or arguments (unpack is limited by
// Lua's C stack, 8,000 slots) are copied element by element instead.
//
// What a call can tell apart from a run of its own, and why gen refuses
// scripts that could (gen/coalesce.go): globals are read-only in Redis 7
// and every local of the body is created anew per call, so only per-run
// server state leaks from one call to the next — the database SELECT chose,
// the RESP version redis.setresp chose, redis.set_repl — and the global
// KEYS and ARGV, which hold the whole run's (_G, getfenv, loadstring reach
// them). (math.random is one stream per server in Redis 7.0, not reseeded
// per run, so merged calls draw from it as separate runs would.) Keys expire
// as of the run's start (Redis freezes the expiry clock during a script),
// which every merged call saw in flight; TIME still advances.

// coalescePrologue opens the body's function on its first code line, so
// every line of the .lua file keeps its number in "@user_script:N".
const coalescePrologue = "local f = function(KEYS, ARGV%s) "

// coalesceEpilogue is the dispatch loop, on the line after the body's last.
// f, g, k, a, K, A, h, out and st are locals of the chunk the body cannot
// see (f is declared by "local f = function", which is not in scope in its
// own body; g calls f with the current call's k and a, so that xpcall, which
// passes no arguments in Lua 5.1, needs no closure per call). g's call is
// not a tail call (the parentheses keep g's frame): error(msg, 2) at the
// top level of the body names g's line, the epilogue's, as the plain
// wrapper's own line after the body; through a tail call Lua finds no
// line and the "user_script:N: " prefix is gone. The handler
// is Redis' own; an emulator without it (miniredis, behind WithoutShebang)
// gets one that keeps the error without its line.
var coalesceEpilogue = "end local K, A, out, st = KEYS, ARGV, {}, {} " +
	"local found, h = pcall(function() return __redis__err__handler end) " +
	"if not found then h = function(e) if type(e) ~= 'table' then e = {err = 'ERR ' .. tostring(e)} end return e end end " +
	"local n, budget, same = tonumber(A[1]), tonumber(A[2]), A[3] == 'same' local t0 = redis.call('TIME') " +
	"local k, a local function g() return (f(k, a)) end " +
	"local nk, na, ki, ai = #K, tonumber(A[4]), 1, 5 if not same then ai = 4 + 2 * n end " +
	"for c = 1, n do " +
	"if c % 8 == 2 then local t = redis.call('TIME') " +
	"if (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) >= budget then for d = c, n do out[d], st[d] = 0, '-' end break end end " +
	"if not same then nk, na = tonumber(A[2 + 2 * c]), tonumber(A[3 + 2 * c]) end " +
	"if nk <= 4000 and na <= 4000 then k, a = {unpack(K, ki, ki + nk - 1)}, {unpack(A, ai, ai + na - 1)} " +
	"else k, a = {}, {} for j = 1, nk do k[j] = K[ki + j - 1] end for j = 1, na do a[j] = A[ai + j - 1] end end " +
	"if not same then ki = ki + nk end ai = ai + na " +
	"local ok, r = xpcall(g, h) " +
	"if ok then " + replyCheck("") + "if r == nil then out[c], st[c] = 0, 'n' else out[c], st[c] = r, 'r' end " +
	"else local m, src, line = r, false, false " +
	"if type(r) == 'table' then m, src, line = r.err, r.source or false, r.line or false end " +
	"if type(m) == 'number' then m = tostring(m) elseif type(m) ~= 'string' then m = false end " +
	"out[c], st[c] = {m, src, line}, 'e' end end out[n + 1] = table.concat(st) return out"

// coalesceBody returns the companion of a script whose .lua file is source:
// the shebang (same flags, so the same EVALSHA_RO, OOM and cluster rules),
// then the code inside the dispatch loop (see the comment above).
func coalesceBody(source string) string {
	return wrapSource(source, coalescePrologue, coalesceEpilogue, ", ...")
}

// coalesceArgs packs calls into the companion's KEYS and ARGV, in the
// shape that sends their keys once when they share them (see above).
func coalesceArgs(calls []*coalesceCall, budgetMicros int64) (keys, args []string) {
	first := calls[0]
	same := true
	na := 4
	for _, c := range calls {
		same = same && len(c.args) == len(first.args) && slices.Equal(c.keys, first.keys)
		na += len(c.args)
	}
	n, budget := strconv.Itoa(len(calls)), strconv.FormatInt(budgetMicros, 10)
	if same {
		keys = first.keys
		args = append(make([]string, 0, na), n, budget, "same", strconv.Itoa(len(first.args)))
	} else {
		nk := 0
		for _, c := range calls {
			nk += len(c.keys)
		}
		keys = make([]string, 0, nk)
		args = append(make([]string, 0, na-1+2*len(calls)), n, budget, "each")
		for _, c := range calls {
			keys = append(keys, c.keys...)
			args = append(args, strconv.Itoa(len(c.keys)), strconv.Itoa(len(c.args)))
		}
	}
	for _, c := range calls {
		args = append(args, c.args...)
	}
	return keys, args
}

// mergedStatus returns the status string of a companion's reply v for a run
// of n calls (see above), or ok false when v is not such a reply. The loop
// always starts call 1 and, once it stops, starts no call after, so '-'
// is never first nor followed by another byte: such a status would hand
// the leader (which is never resent) no reply, or run a call again after
// later ones.
func mergedStatus(v Value, n int) (status string, ok bool) {
	if v.Kind != KindArray || len(v.Array) != n+1 {
		return "", false
	}
	last := v.Array[n]
	if last.Kind != KindString || len(last.Str) != n {
		return "", false
	}
	st := last.Str
	ran, rest, _ := strings.Cut(st, "-")
	return st, ran != "" && strings.Trim(ran, "rne") == "" && strings.Trim(rest, "-") == ""
}

// mergedReply decodes element e of a companion's reply, whose status byte
// is st, for script s: the Value and error its call would have got from
// EvalSha alone, and whether the call ran at all.
func mergedReply(s *Script, st byte, e Value) (v Value, err error, ran bool) {
	switch st {
	case 'n':
		return Value{}, nil, true
	case 'r':
		if e.Kind == KindError {
			return Value{}, &ReplyError{Msg: e.Str}, true
		}
		return e, nil, true
	case 'e':
		if e.Kind == KindArray && len(e.Array) == 3 {
			return Value{}, raisedReply(s, e.Array[0], e.Array[1], e.Array[2]), true
		}
	case '-':
		return Value{}, nil, false
	}
	return Value{}, &DecodeError{Script: s.name, Want: "a merged run's reply", Got: e}, true
}

// raisedReply rebuilds the error reply Redis sends for an error raised in
// a script run alone (luaCallFunction, script_lua.c in 7.0): the err
// field, then " script: <sha1>, on <source>:<line>." when the handler
// found a Lua frame, with CR and LF turned into spaces as addReplyError
// does; executors drop a leading "ERR ", and so does this.
func raisedReply(s *Script, msg, src, line Value) error {
	var b strings.Builder
	b.WriteString(msg.Str)
	if src.Kind == KindString && line.Kind == KindInt {
		b.WriteString(" script: ")
		b.WriteString(s.sha1)
		b.WriteString(", on ")
		b.WriteString(src.Str)
		b.WriteByte(':')
		b.WriteString(strconv.FormatInt(line.Int, 10))
		b.WriteByte('.')
	}
	text := strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, b.String())
	return &ReplyError{Msg: strings.TrimPrefix(text, "ERR ")}
}
