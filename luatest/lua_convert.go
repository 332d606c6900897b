package luatest

import (
	"math"
	"strings"

	"github.com/luagen/luagen/luatest/resp"
	lua "github.com/yuin/gopher-lua"
)

// The conversion rules between Lua values and replies, as in Redis 7.0's
// script_lua.c and documented in "Conversion between Lua and Redis data
// types" (https://redis.io/docs/latest/develop/interact/programmability/lua-api/).

// replyToLua converts a command's reply for a script (redisProtocolToLuaType).
// Inside a script running RESP2 (the default), a nil reply is false; under
// redis.setresp(3) it is nil, and RESP3 types become tables: {map=...},
// {set=...}, {double=...}, {big_number=...}, booleans as booleans.
func replyToLua(L *lua.LState, r resp.Reply, scriptResp int) lua.LValue {
	switch r.Kind {
	case resp.Nil:
		if scriptResp == 3 {
			return lua.LNil
		}
		return lua.LFalse
	case resp.Int:
		if r.Int >= 0 && r.Int < int64(len(luaSmallInts)) {
			return luaSmallInts[r.Int]
		}
		return lua.LNumber(r.Int)
	case resp.Bulk:
		return lua.LString(r.Str)
	case resp.Status:
		t := L.CreateTable(0, 1)
		t.RawSetString("ok", lua.LString(r.Str))
		return t
	case resp.Error:
		t := luaErrorReply(L, "-"+r.Str)
		t.RawSetString("ignore_error_stats_update", lua.LTrue)
		return t
	case resp.Array:
		t := L.CreateTable(len(r.Elems), 0)
		for i, e := range r.Elems {
			t.RawSetInt(i+1, replyToLua(L, e, scriptResp))
		}
		return t
	case resp.Map:
		m := L.CreateTable(0, len(r.Elems)/2)
		for i := 0; i+1 < len(r.Elems); i += 2 {
			m.RawSet(replyToLua(L, r.Elems[i], scriptResp), replyToLua(L, r.Elems[i+1], scriptResp))
		}
		t := L.CreateTable(0, 1)
		t.RawSetString("map", m)
		return t
	case resp.Set:
		s := L.CreateTable(0, len(r.Elems))
		for _, e := range r.Elems {
			s.RawSet(replyToLua(L, e, scriptResp), lua.LTrue)
		}
		t := L.CreateTable(0, 1)
		t.RawSetString("set", s)
		return t
	case resp.Double:
		t := L.CreateTable(0, 1)
		t.RawSetString("double", lua.LNumber(r.Float))
		return t
	case resp.Bool:
		return lua.LBool(r.Int != 0)
	case resp.BigNumber:
		t := L.CreateTable(0, 1)
		t.RawSetString("big_number", lua.LString(r.Str))
		return t
	case resp.Verbatim:
		v := L.CreateTable(0, 2)
		v.RawSetString("format", lua.LString("txt"))
		v.RawSetString("string", lua.LString(r.Str))
		t := L.CreateTable(0, 1)
		t.RawSetString("verbatim_string", v)
		return t
	}
	return lua.LNil
}

// luaSmallInts are the integer replies most commands give (counts, 0 and
// 1), each made a Lua value once instead of on every reply.
var luaSmallInts = func() (ns [256]lua.LValue) {
	for i := range ns {
		ns[i] = lua.LNumber(i)
	}
	return ns
}()

// luaErrorReply builds the error table Redis pushes for an error reply
// (luaPushErrorBuff): from "-CODE message" it keeps "CODE message"; a
// message without a space becomes "ERR " + message; a text without a
// leading '-' gets "ERR " in front. Trailing CR/LF are trimmed.
func luaErrorReply(L *lua.LState, buf string) *lua.LTable {
	var code, msg string
	if strings.HasPrefix(buf, "-") {
		if i := strings.IndexByte(buf, ' '); i < 0 {
			code, msg = "ERR", buf[1:]
		} else {
			code, msg = buf[1:i], buf[i+1:]
		}
	} else {
		code, msg = "ERR", buf
	}
	msg = strings.Trim(msg, "\r\n")
	t := L.CreateTable(0, 1)
	t.RawSetString("err", lua.LString(code+" "+msg))
	return t
}

// luaToReply converts a script's return value into the reply the client
// gets (luaReplyToRedisReply). clientProto is the caller's protocol,
// scriptResp the script's redis.setresp.
func luaToReply(v lua.LValue, clientProto, scriptResp int) resp.Reply {
	// The error handler and the script's value are on the stack when
	// luaCallFunction converts it, for EVAL and FCALL alike.
	return luaToReplyDepth(v, clientProto, scriptResp, 2)
}

// luaMaxCStack is Lua 5.1's LUAI_MAXCSTACK: lua_checkstack refuses to let
// the stack of a C function (or of the host, between calls) grow past it.
const luaMaxCStack = 8000

// luaToReplyDepth converts v while slots Lua stack slots are in use, v
// counted. luaReplyToRedisReply starts with lua_checkstack(lua, 4) and
// answers "reached lua stack limit" in place of the value when that
// fails; it holds one more slot per array level (the element), three per
// set level (the set, the key, its copy being converted) and three or four
// per map level (the map, key, value, and the key's copy while the key is
// converted). So a table nested in itself ends after 7995 arrays, 2665
// sets or map values, 1999 map keys.
func luaToReplyDepth(v lua.LValue, clientProto, scriptResp, slots int) resp.Reply {
	if slots+4 > luaMaxCStack {
		return resp.ErrorReply("ERR reached lua stack limit")
	}
	switch v := v.(type) {
	case lua.LString:
		return resp.BulkReply(string(v))
	case lua.LBool:
		if scriptResp == 2 {
			if v {
				return resp.IntReply(1)
			}
			return resp.NilReply
		}
		if clientProto == 2 {
			return resp.IntReply(map[bool]int64{true: 1, false: 0}[bool(v)])
		}
		return resp.BoolReply(bool(v))
	case lua.LNumber:
		return resp.IntReply(luaNumberToInt(float64(v)))
	case *lua.LTable:
		if s, ok := v.RawGetString("err").(lua.LString); ok {
			return resp.ErrorReply(sanitizeLine(cString(string(s))))
		}
		if s, ok := v.RawGetString("ok").(lua.LString); ok {
			return resp.StatusReply(sanitizeLine(cString(string(s))))
		}
		if n, ok := v.RawGetString("double").(lua.LNumber); ok {
			f := float64(n)
			if clientProto == 2 {
				return resp.BulkReply(resp.FormatDouble(f))
			}
			return resp.DoubleReply(f)
		}
		if s, ok := v.RawGetString("big_number").(lua.LString); ok {
			b := sanitizeLine(string(s))
			if clientProto == 2 {
				return resp.BulkReply(b)
			}
			return resp.Reply{Kind: resp.BigNumber, Str: b}
		}
		if vt, ok := v.RawGetString("verbatim_string").(*lua.LTable); ok {
			if _, ok := vt.RawGetString("format").(lua.LString); ok {
				if s, ok := vt.RawGetString("string").(lua.LString); ok {
					if clientProto == 2 {
						return resp.BulkReply(string(s))
					}
					return resp.Reply{Kind: resp.Verbatim, Str: string(s)}
				}
			}
		}
		if m, ok := v.RawGetString("map").(*lua.LTable); ok {
			var elems []resp.Reply
			forEach(m, func(k, val lua.LValue) {
				elems = append(elems, luaToReplyDepth(k, clientProto, scriptResp, slots+4),
					luaToReplyDepth(val, clientProto, scriptResp, slots+3))
			})
			kind := resp.Map
			if clientProto == 2 {
				kind = resp.Array
			}
			return resp.Reply{Kind: kind, Elems: elems}
		}
		if s, ok := v.RawGetString("set").(*lua.LTable); ok {
			var elems []resp.Reply
			forEach(s, func(k, _ lua.LValue) {
				elems = append(elems, luaToReplyDepth(k, clientProto, scriptResp, slots+3))
			})
			kind := resp.Set
			if clientProto == 2 {
				kind = resp.Array
			}
			return resp.Reply{Kind: kind, Elems: elems}
		}
		elems := []resp.Reply{}
		for i := 1; ; i++ {
			e := v.RawGetInt(i)
			if e == lua.LNil {
				break
			}
			elems = append(elems, luaToReplyDepth(e, clientProto, scriptResp, slots+1))
		}
		return resp.Reply{Kind: resp.Array, Elems: elems}
	}
	return resp.NilReply
}

// luaNumberToInt is C's (long long) cast of a double as x86-64 performs it:
// truncation toward zero, and INT64_MIN for NaN and values out of range.
func luaNumberToInt(f float64) int64 {
	if math.IsNaN(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(f)
}

// cString is s as C code sees a Lua string through lua_tostring and sdsnew:
// up to its first NUL byte. Redis builds error and status replies that way
// (luaReplyToRedisReply, luaExtractErrorInformation,
// luaRedisErrorReplyCommand), so "a\x00b" in an error or status reply
// arrives as "a".
func cString(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// sanitizeLine replaces CR and LF with spaces, as Redis does for status
// and error replies a script returns (they must fit on one protocol line).
func sanitizeLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	// Byte by byte: strings.Map would turn invalid UTF-8 into U+FFFD,
	// and replies are bytes.
	b := []byte(s)
	for i, c := range b {
		if c == '\r' || c == '\n' {
			b[i] = ' '
		}
	}
	return string(b)
}
