package luatest

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Lua 5.1's pattern matching (lstrlib.c of the Lua Redis 7.0 ships),
// ported line by line for string.find, match, gmatch (and its alias gfind)
// and gsub. gopher-lua compiles a pattern before matching and words its
// errors its own way ("unfinished capture at EOS"); Lua 5.1 interprets the
// pattern while it matches, so a malformed pattern fails only when the
// matcher reaches the bad part, with lstrlib's texts.

const (
	capUnfinished   = -1
	capPosition     = -2
	luaMaxCaptures  = 32 // LUA_MAXCAPTURES
	patternSpecials = "^$*+?.([%-"
)

type capture struct{ init, len int }

// matchState is MatchState: the subject, the pattern (both read as C
// strings: 0 past their end) and the captures.
type matchState struct {
	L       *lua.LState
	src     string
	pat     string
	level   int
	capture [luaMaxCaptures]capture
	// whole is src as a Lua value when there is one (string.find and
	// string.match): a capture of all of src pushes it, not a new copy.
	whole lua.LValue
}

// pushSub pushes src[i:j], reusing whole when that is all of src.
func (ms *matchState) pushSub(i, j int) {
	if i == 0 && j == len(ms.src) && ms.whole != nil {
		ms.L.Push(ms.whole)
		return
	}
	ms.L.Push(lua.LString(ms.src[i:j]))
}

func (ms *matchState) s(i int) byte {
	if i < len(ms.src) {
		return ms.src[i]
	}
	return 0
}

func (ms *matchState) p(i int) byte {
	if i < len(ms.pat) {
		return ms.pat[i]
	}
	return 0
}

func (ms *matchState) checkCapture(l int) int {
	l -= '1'
	if l < 0 || l >= ms.level || ms.capture[l].len == capUnfinished {
		cError(ms.L, "invalid capture index")
	}
	return l
}

func (ms *matchState) captureToClose() int {
	for level := ms.level - 1; level >= 0; level-- {
		if ms.capture[level].len == capUnfinished {
			return level
		}
	}
	cError(ms.L, "invalid pattern capture")
	return 0
}

func (ms *matchState) classEnd(p int) int {
	c := ms.p(p)
	p++
	switch c {
	case '%':
		if ms.p(p) == 0 {
			cError(ms.L, "malformed pattern (ends with '%%')")
		}
		return p + 1
	case '[':
		if ms.p(p) == '^' {
			p++
		}
		for { // look for a ']'
			if ms.p(p) == 0 {
				cError(ms.L, "malformed pattern (missing ']')")
			}
			c := ms.p(p)
			p++
			if c == '%' && ms.p(p) != 0 {
				p++ // skip escapes (e.g. '%]')
			}
			if ms.p(p) == ']' {
				return p + 1
			}
		}
	}
	return p
}

// matchClass is match_class with the C locale's ctype.
func matchClass(c, cl byte) bool {
	var res bool
	switch cl | 0x20 {
	case 'a':
		res = isAlpha(c)
	case 'c':
		res = c < 32 || c == 127
	case 'd':
		res = c >= '0' && c <= '9'
	case 'l':
		res = c >= 'a' && c <= 'z'
	case 'p':
		res = c > 32 && c < 127 && !isAlpha(c) && !(c >= '0' && c <= '9')
	case 's':
		res = c == ' ' || (c >= '\t' && c <= '\r')
	case 'u':
		res = c >= 'A' && c <= 'Z'
	case 'w':
		res = isAlpha(c) || (c >= '0' && c <= '9')
	case 'x':
		res = (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'f')
	case 'z':
		res = c == 0
	default:
		return cl == c
	}
	if cl >= 'a' && cl <= 'z' {
		return res
	}
	return !res
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// matchBracketClass is matchbracketclass: p at '[', ec at its ']'.
func (ms *matchState) matchBracketClass(c byte, p, ec int) bool {
	sig := true
	if ms.p(p+1) == '^' {
		sig = false
		p++
	}
	for p++; p < ec; p++ {
		switch {
		case ms.p(p) == '%':
			p++
			if matchClass(c, ms.p(p)) {
				return sig
			}
		case ms.p(p+1) == '-' && p+2 < ec:
			p += 2
			if ms.p(p-2) <= c && c <= ms.p(p) {
				return sig
			}
		case ms.p(p) == c:
			return sig
		}
	}
	return !sig
}

func (ms *matchState) singleMatch(c byte, p, ep int) bool {
	switch ms.p(p) {
	case '.':
		return true
	case '%':
		return matchClass(c, ms.p(p+1))
	case '[':
		return ms.matchBracketClass(c, p, ep-1)
	}
	return ms.p(p) == c
}

func (ms *matchState) matchBalance(s, p int) int {
	if ms.p(p) == 0 || ms.p(p+1) == 0 {
		cError(ms.L, "unbalanced pattern")
	}
	if ms.s(s) != ms.p(p) {
		return -1
	}
	b, e, cont := ms.p(p), ms.p(p+1), 1
	for s++; s < len(ms.src); s++ {
		switch ms.src[s] {
		case e:
			if cont--; cont == 0 {
				return s + 1
			}
		case b:
			cont++
		}
	}
	return -1 // the string ends out of balance
}

func (ms *matchState) maxExpand(s, p, ep int) int {
	i := 0
	for s+i < len(ms.src) && ms.singleMatch(ms.src[s+i], p, ep) {
		i++
	}
	for ; i >= 0; i-- { // try the maximum repetitions first
		if res := ms.match(s+i, ep+1); res >= 0 {
			return res
		}
	}
	return -1
}

func (ms *matchState) minExpand(s, p, ep int) int {
	for {
		if res := ms.match(s, ep+1); res >= 0 {
			return res
		}
		if s < len(ms.src) && ms.singleMatch(ms.src[s], p, ep) {
			s++
		} else {
			return -1
		}
	}
}

func (ms *matchState) startCapture(s, p, what int) int {
	level := ms.level
	if level >= luaMaxCaptures {
		cError(ms.L, "too many captures")
	}
	ms.capture[level] = capture{s, what}
	ms.level = level + 1
	res := ms.match(s, p)
	if res < 0 {
		ms.level-- // undo capture
	}
	return res
}

func (ms *matchState) endCapture(s, p int) int {
	l := ms.captureToClose()
	ms.capture[l].len = s - ms.capture[l].init
	res := ms.match(s, p)
	if res < 0 {
		ms.capture[l].len = capUnfinished
	}
	return res
}

func (ms *matchState) matchCapture(s, l int) int {
	l = ms.checkCapture(l)
	n := ms.capture[l].len
	if len(ms.src)-s >= n && ms.src[ms.capture[l].init:ms.capture[l].init+n] == ms.src[s:s+n] {
		return s + n
	}
	return -1
}

// match is match(): the end of the match of pattern p at subject s, or -1.
func (ms *matchState) match(s, p int) int {
	for {
		switch ms.p(p) {
		case '(':
			if ms.p(p+1) == ')' {
				return ms.startCapture(s, p+2, capPosition)
			}
			return ms.startCapture(s, p+1, capUnfinished)
		case ')':
			return ms.endCapture(s, p+1)
		case 0:
			return s
		case '%':
			switch ms.p(p + 1) {
			case 'b':
				if s = ms.matchBalance(s, p+2); s < 0 {
					return -1
				}
				p += 4
				continue
			case 'f':
				p += 2
				if ms.p(p) != '[' {
					cError(ms.L, "missing '[' after '%%f' in pattern")
				}
				ep := ms.classEnd(p)
				var previous byte
				if s > 0 {
					previous = ms.src[s-1]
				}
				if ms.matchBracketClass(previous, p, ep-1) || !ms.matchBracketClass(ms.s(s), p, ep-1) {
					return -1
				}
				p = ep
				continue
			}
			if c := ms.p(p + 1); c >= '0' && c <= '9' { // a back reference
				if s = ms.matchCapture(s, int(c)); s < 0 {
					return -1
				}
				p += 2
				continue
			}
		case '$':
			if ms.p(p+1) == 0 {
				if s == len(ms.src) {
					return s
				}
				return -1
			}
		}
		// a pattern item
		ep := ms.classEnd(p)
		m := s < len(ms.src) && ms.singleMatch(ms.src[s], p, ep)
		switch ms.p(ep) {
		case '?':
			if m {
				if res := ms.match(s+1, ep+1); res >= 0 {
					return res
				}
			}
			p = ep + 1
		case '*':
			return ms.maxExpand(s, p, ep)
		case '+':
			if !m {
				return -1
			}
			return ms.maxExpand(s+1, p, ep)
		case '-':
			return ms.minExpand(s, p, ep)
		default:
			if !m {
				return -1
			}
			s++
			p = ep
		}
	}
}

// pushCapture is push_onecapture.
func (ms *matchState) pushCapture(i, s, e int) {
	if i >= ms.level {
		if i != 0 {
			cError(ms.L, "invalid capture index")
		}
		ms.pushSub(s, e) // the whole match
		return
	}
	c := ms.capture[i]
	switch c.len {
	case capUnfinished:
		cError(ms.L, "unfinished capture")
	case capPosition:
		ms.L.Push(lua.LNumber(c.init + 1))
	default:
		ms.pushSub(c.init, c.init+c.len)
	}
}

// pushCaptures is push_captures; wholeIfNone pushes the match itself when
// the pattern has no captures (s is not NULL in the C code).
func (ms *matchState) pushCaptures(s, e int, wholeIfNone bool) int {
	n := ms.level
	if n == 0 && wholeIfNone {
		n = 1
	}
	for i := 0; i < n; i++ {
		ms.pushCapture(i, s, e)
	}
	return n
}

// cPattern is the pattern as C reads it: up to its first NUL.
func cPattern(p string) string {
	if i := strings.IndexByte(p, 0); i >= 0 {
		return p[:i]
	}
	return p
}

// posrelat is lstrlib's: a negative position counts from the end.
func posrelat(pos int64, n int) int64 {
	if pos < 0 {
		pos += int64(n) + 1
	}
	return max(pos, 0)
}

// strFindAux is str_find_aux: string.find (find) and string.match.
func strFindAux(L *lua.LState, find bool) int {
	s, p := L.CheckString(1), L.CheckString(2)
	init := posrelat(int64(L.OptNumber(3, 1)), len(s)) - 1
	init = min(max(init, 0), int64(len(s)))
	cp := cPattern(p)
	if find && (lua.LVAsBool(L.Get(4)) || !strings.ContainsAny(cp, patternSpecials)) {
		// a plain search, of the whole pattern
		if i := strings.Index(s[init:], p); i >= 0 {
			L.Push(lua.LNumber(int(init) + i + 1))
			L.Push(lua.LNumber(int(init) + i + len(p)))
			return 2
		}
		L.Push(lua.LNil)
		return 1
	}
	anchor := strings.HasPrefix(cp, "^")
	if anchor {
		cp = cp[1:]
	}
	ms := &matchState{L: L, src: s, pat: cp}
	if v := L.Get(1); v.Type() == lua.LTString && len(v.(lua.LString)) == len(s) {
		ms.whole = v // the interface as it is: converting it again would allocate
	}
	for s1 := int(init); ; s1++ {
		ms.level = 0
		if e := ms.match(s1, 0); e >= 0 {
			if find {
				L.Push(lua.LNumber(s1 + 1))
				L.Push(lua.LNumber(e))
				return ms.pushCaptures(0, 0, false) + 2
			}
			return ms.pushCaptures(s1, e, true)
		}
		if s1 >= len(s) || anchor {
			break
		}
	}
	L.Push(lua.LNil)
	return 1
}

func strFind(L *lua.LState) int  { return strFindAux(L, true) }
func strMatch(L *lua.LState) int { return strFindAux(L, false) }

// strGmatch is gmatch: an iterator over the matches, from where the last
// one ended (one further after an empty match).
func strGmatch(L *lua.LState) int {
	s, p := L.CheckString(1), cPattern(L.CheckString(2))
	pos := 0
	L.Push(L.NewFunction(func(L *lua.LState) int {
		ms := &matchState{L: L, src: s, pat: p}
		for src := pos; src <= len(s); src++ {
			ms.level = 0
			if e := ms.match(src, 0); e >= 0 {
				pos = e
				if e == src {
					pos++ // an empty match: go at least one position
				}
				return ms.pushCaptures(src, e, true)
			}
		}
		return 0
	}))
	return 1
}

// strGsub is str_gsub with add_value and add_s.
func strGsub(L *lua.LState) int {
	src, p := L.CheckString(1), cPattern(L.CheckString(2))
	repl := L.Get(3)
	maxS := int64(len(src) + 1)
	if v := L.Get(4); v != lua.LNil {
		maxS = int64(L.CheckNumber(4))
	}
	anchor := strings.HasPrefix(p, "^")
	if anchor {
		p = p[1:]
	}
	switch repl.Type() {
	case lua.LTNumber, lua.LTString, lua.LTFunction, lua.LTTable:
	default:
		cArgError(L, 3, "string/function/table expected")
	}
	ms := &matchState{L: L, src: src, pat: p}
	var b strings.Builder
	n, s := int64(0), 0
loop:
	for n < maxS {
		ms.level = 0
		e := ms.match(s, 0)
		if e >= 0 {
			n++
			ms.addValue(&b, repl, s, e)
		}
		switch {
		case e >= 0 && e > s: // a non-empty match: skip it
			s = e
		case s < len(src):
			b.WriteByte(src[s])
			s++
		default:
			break loop
		}
		if anchor {
			break
		}
	}
	b.WriteString(src[min(s, len(src)):])
	L.Push(lua.LString(b.String()))
	L.Push(lua.LNumber(n))
	return 2
}

// addValue is add_value: the replacement of the match s..e.
func (ms *matchState) addValue(b *strings.Builder, repl lua.LValue, s, e int) {
	L := ms.L
	switch r := repl.(type) {
	case lua.LString, lua.LNumber:
		news := lua.LVAsString(r)
		if n, ok := r.(lua.LNumber); ok {
			news = numberToString(float64(n))
		}
		for i := 0; i < len(news); i++ {
			if news[i] != '%' {
				b.WriteByte(news[i])
				continue
			}
			i++ // skip ESC
			var c byte
			if i < len(news) {
				c = news[i]
			}
			switch {
			case c < '0' || c > '9':
				if i < len(news) {
					b.WriteByte(c)
				} else {
					b.WriteByte(0) // C reads the string's terminating NUL
				}
			case c == '0':
				b.WriteString(ms.src[s:e])
			default:
				ms.pushCapture(int(c-'1'), s, e)
				b.WriteString(lua.LVAsString(L.Get(-1)))
				L.Pop(1)
			}
		}
		return
	case *lua.LFunction:
		L.Push(r)
		L.Call(ms.pushCaptures(s, e, true), 1)
	case *lua.LTable:
		ms.pushCapture(0, s, e)
		L.Push(L.GetTable(r, L.Get(-1)))
		L.Remove(-2)
	}
	v := L.Get(-1)
	L.Pop(1)
	switch v := v.(type) {
	case lua.LString:
		b.WriteString(string(v))
	case lua.LNumber:
		b.WriteString(numberToString(float64(v)))
	default:
		if !lua.LVAsBool(v) { // nil or false: keep the original text
			b.WriteString(ms.src[s:e])
			return
		}
		cError(L, "invalid replacement value (a %s)", v.Type().String())
	}
}
