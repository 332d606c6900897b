package lua51

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// A syntax-only port of Lua 5.1.5's lexer (llex.c) and parser
// (lparser.c), as Redis 7.0 bundles them in deps/lua/src. luatest runs it
// before gopher-lua's parser so that a script that does not compile fails
// with the text and line Lua 5.1 gives ("user_script:1: unfinished string
// near '<eof>'", "'end' expected (to close 'function' at line 3) near 'x'",
// "chunk has too many syntax levels", "main function has more than 200
// local variables"), and the generator runs it so that `luagen check`
// refuses what Redis would (goto and labels, which gopher-lua parses). It
// builds nothing: the code generator (lcode.c) is left out except for what
// decides an error, and gopher-lua still parses and compiles the chunk once
// this check accepts it.
//
// The port keeps the C's shape, function by function, so it can be read
// side by side with lparser.c; each function names the C one it ports.
// luaD_throw becomes a panic of *SyntaxError, recovered by Check.

// SyntaxError is a compile error worded exactly as Lua 5.1 words it,
// chunk name and line included.
type SyntaxError struct {
	// Msg is the whole message, e.g. "user_script:3: '=' expected near
	// 'continue'".
	Msg string
	// Line is the line the lexer was on: the line Msg names (a few
	// messages, such as "too many local variables", name none).
	Line int
}

// Error returns Msg.
func (e *SyntaxError) Error() string { return e.Msg }

// Limits as Redis 7.0 compiles Lua (luaconf.h, llimits.h).
const (
	luaiMaxCCalls   = 200            // LUAI_MAXCCALLS
	luaiMaxVars     = 200            // LUAI_MAXVARS
	luaiMaxUpvalues = 60             // LUAI_MAXUPVALUES
	maxInt51        = 2147483647 - 2 // MAX_INT
	shrtMax         = 32767          // SHRT_MAX, the bound of a function's locvars
	maxSrc          = 80             // MAXSRC in llex.c
)

// Tokens (llex.h, ORDER RESERVED).
const (
	firstReserved = 257
	tkAnd         = firstReserved + iota - 1
	tkBreak
	tkDo
	tkElse
	tkElseif
	tkEnd
	tkFalse
	tkFor
	tkFunction
	tkIf
	tkIn
	tkLocal
	tkNil
	tkNot
	tkOr
	tkRepeat
	tkReturn
	tkThen
	tkTrue
	tkUntil
	tkWhile
	tkConcat
	tkDots
	tkEq
	tkGe
	tkLe
	tkNe
	tkNumber
	tkName
	tkString
	tkEOS
)

const eoz = -1 // EOZ, end of stream

// luaXTokens is luaX_tokens.
var luaXTokens = [...]string{
	"and", "break", "do", "else", "elseif",
	"end", "false", "for", "function", "if",
	"in", "local", "nil", "not", "or", "repeat",
	"return", "then", "true", "until", "while",
	"..", "...", "==", ">=", "<=", "~=",
	"<number>", "<name>", "<string>", "<eof>",
}

var reserved51 = func() map[string]int {
	m := map[string]int{}
	for i := 0; i < tkWhile-firstReserved+1; i++ {
		m[luaXTokens[i]] = firstReserved + i
	}
	return m
}()

// token51 is a Token: the token and, for names, the name (SemInfo.ts).
type token51 struct {
	token int
	name  string
}

// blockCnt51 is BlockCnt.
type blockCnt51 struct {
	previous    *blockCnt51
	nactvar     int
	isbreakable bool
}

// upvalDesc51 is upvaldesc: where an upvalue comes from.
type upvalDesc51 struct {
	k    int // expLocal or expUpval
	info int
}

// funcState51 is FuncState, reduced to what decides errors.
type funcState51 struct {
	prev        *funcState51
	bl          *blockCnt51
	linedefined int
	isVararg    bool
	actvar      [luaiMaxVars]string // names of the locals, active ones first
	nactvar     int
	nlocvars    int // locals registered (fs->nlocvars)
	upvalues    []upvalDesc51
}

// Expression kinds (expkind in lparser.h), those the parser tests.
const (
	expVoid = iota
	expNil
	expTrue
	expFalse
	expK
	expKNum
	expLocal
	expUpval
	expGlobal
	expIndexed
	expJmp
	expRelocable
	expNonReloc
	expCall
	expVararg
)

// expDesc51 is expdesc: its kind, and the variable's index for locals and
// upvalues (u.s.info).
type expDesc51 struct {
	k    int
	info int
}

// lexState51 is LexState.
type lexState51 struct {
	src        string
	p          int // next byte of src (ZIO)
	current    int
	linenumber int
	lastline   int
	t          token51
	lookahead  token51
	fs         *funcState51
	buff       []byte
	source     string // the chunk's name as luaO_chunkid shows it
	nCcalls    int    // L->nCcalls
	// fixes are the tokens gopher-lua's lexer reads differently, in
	// source order: hex numerals with a binary exponent ("0x1p4", which
	// glibc's strtod reads) and the name goto (a keyword in gopher-lua).
	fixes []sourceFix
}

// sourceFix replaces src[start:end] with text for gopher-lua.
type sourceFix struct {
	start, end int
	text       string
}

// GotoName stands for the name goto in the source gopher-lua parses (Check
// writes it so); luatest renames it back in the syntax tree.
const GotoName = "__luatest_goto"

// Check parses src as luaY_parser does and returns a *[SyntaxError] for the
// first error Lua 5.1 reports, nil when the chunk is valid Lua 5.1. source
// is the chunk name as given to lua_load ("@user_script"); nCcalls is the C
// call depth the parser starts at (0 when the server compiles a script,
// more for loadstring inside one). For a valid chunk it returns the source
// for gopher-lua: src with every hexadecimal numeral that has a binary
// exponent (which gopher-lua's lexer stops reading at the "p") written in
// decimal, and the name goto written as [GotoName], on the same line.
func Check(src, source string, nCcalls int) (forGopher string, err error) {
	defer func() {
		if r := recover(); r != nil {
			se, ok := r.(*SyntaxError)
			if !ok {
				panic(r)
			}
			err = se
		}
	}()
	ls := &lexState51{src: src, source: ChunkIDLen(source, maxSrc), nCcalls: nCcalls}
	luaYParser(ls)
	if len(ls.fixes) == 0 {
		return src, nil
	}
	var b strings.Builder
	last := 0
	for _, f := range ls.fixes {
		b.WriteString(src[last:f.start])
		b.WriteString(f.text)
		last = f.end
	}
	b.WriteString(src[last:])
	return b.String(), nil
}

// ---- llex.c ----

func (ls *lexState51) next() {
	if ls.p < len(ls.src) {
		ls.current = int(ls.src[ls.p])
		ls.p++
	} else {
		ls.current = eoz
	}
}

func (ls *lexState51) currIsNewline() bool { return ls.current == '\n' || ls.current == '\r' }

func (ls *lexState51) saveAndNext() {
	ls.save(ls.current)
	ls.next()
}

func (ls *lexState51) save(c int) { ls.buff = append(ls.buff, byte(c)) }

// The C character classes of the "C" locale (Redis sets only LC_COLLATE).
func cIsDigit(c int) bool { return c >= '0' && c <= '9' }
func cIsAlpha(c int) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func cIsAlnum(c int) bool { return cIsAlpha(c) || cIsDigit(c) }
func cIsSpace(c int) bool { return c == ' ' || c >= '\t' && c <= '\r' }
func cIsCntrl(c int) bool { return c >= 0 && c < 32 || c == 127 }

// token2str is luaX_token2str.
func (ls *lexState51) token2str(token int) string {
	if token < firstReserved {
		if cIsCntrl(token) {
			return fmt.Sprintf("char(%d)", token)
		}
		return string([]byte{byte(token)})
	}
	return luaXTokens[token-firstReserved]
}

// txtToken: names, strings and numbers show the lexer's buffer, read as
// a C string (it ends at a NUL).
func (ls *lexState51) txtToken(token int) string {
	switch token {
	case tkName, tkString, tkNumber:
		s := ls.buff
		for i, c := range s {
			if c == 0 {
				s = s[:i]
				break
			}
		}
		return string(s)
	}
	return ls.token2str(token)
}

// lexError is luaX_lexerror; token 0 adds no "near" part.
func (ls *lexState51) lexError(msg string, token int) {
	msg = fmt.Sprintf("%s:%d: %s", ls.source, ls.linenumber, msg)
	if token != 0 {
		msg = fmt.Sprintf("%s near '%s'", msg, ls.txtToken(token))
	}
	panic(&SyntaxError{Msg: msg, Line: ls.linenumber})
}

// syntaxError is luaX_syntaxerror.
func (ls *lexState51) syntaxError(msg string) { ls.lexError(msg, ls.t.token) }

// inclinenumber skips \n, \r, \n\r or \r\n.
func (ls *lexState51) inclinenumber() {
	old := ls.current
	ls.next()
	if ls.currIsNewline() && ls.current != old {
		ls.next()
	}
	ls.linenumber++
	if ls.linenumber >= maxInt51 {
		ls.syntaxError("chunk has too many lines")
	}
}

// setInput is luaX_setinput.
func (ls *lexState51) setInput() {
	ls.lookahead.token = tkEOS
	ls.linenumber = 1
	ls.lastline = 1
	ls.next()
}

func (ls *lexState51) checkNext(set string) bool {
	for i := 0; i < len(set); i++ {
		if ls.current == int(set[i]) {
			ls.saveAndNext()
			return true
		}
	}
	return false
}

// readNumeral is read_numeral: the numeral must be what luaO_str2d
// (strtod, glibc's: hex, exponents) reads entirely.
func (ls *lexState51) readNumeral() {
	start := ls.offset() - len(ls.buff)
	for {
		ls.saveAndNext()
		if !cIsDigit(ls.current) && ls.current != '.' {
			break
		}
	}
	if ls.checkNext("Ee") {
		ls.checkNext("+-")
	}
	for cIsAlnum(ls.current) || ls.current == '_' {
		ls.saveAndNext()
	}
	v, ok := Str2d(string(ls.buff))
	if !ok {
		ls.lexError("malformed number", tkNumber) // trydecpoint: the locale's point is '.'
	}
	if len(ls.buff) > 2 && ls.buff[0] == '0' && (ls.buff[1] == 'x' || ls.buff[1] == 'X') &&
		bytes.ContainsAny(ls.buff, "pP") {
		text := strconv.FormatFloat(v, 'g', -1, 64)
		if math.IsInf(v, 0) {
			text = "(1/0)" // gopher-lua reads 1e999 as NaN
		}
		ls.fixes = append(ls.fixes, sourceFix{start: start, end: ls.offset(), text: text})
	}
}

// offset is the position of the current character in src.
func (ls *lexState51) offset() int {
	if ls.current == eoz {
		return len(ls.src)
	}
	return ls.p - 1
}

// skipSep is skip_sep: the level of a long bracket, or -count-1 when it
// is not one.
func (ls *lexState51) skipSep() int {
	count := 0
	s := ls.current
	ls.saveAndNext()
	for ls.current == '=' {
		ls.saveAndNext()
		count++
	}
	if ls.current == s {
		return count
	}
	return -count - 1
}

// readLongString is read_long_string (isString false: a long comment).
// The redis-server 7.0.15 the corpus runs against accepts "[[" inside a
// long string (its Lua is built without LUA_COMPAT_LSTR's "nesting of
// [[...]] is deprecated" error), so that check is left out.
func (ls *lexState51) readLongString(isString bool, sep int) {
	ls.saveAndNext() // skip 2nd '['
	if ls.currIsNewline() {
		ls.inclinenumber()
	}
	for {
		switch ls.current {
		case eoz:
			if isString {
				ls.lexError("unfinished long string", tkEOS)
			}
			ls.lexError("unfinished long comment", tkEOS)
		case ']':
			if ls.skipSep() == sep {
				ls.saveAndNext() // skip 2nd ']'
				return
			}
		case '\n', '\r':
			ls.save('\n')
			ls.inclinenumber()
			if !isString {
				ls.buff = ls.buff[:0]
			}
		default:
			if isString {
				ls.saveAndNext()
			} else {
				ls.next()
			}
		}
	}
}

// readString is read_string.
func (ls *lexState51) readString(del int) {
	ls.saveAndNext()
	for ls.current != del {
		switch ls.current {
		case eoz:
			ls.lexError("unfinished string", tkEOS)
		case '\n', '\r':
			ls.lexError("unfinished string", tkString)
		case '\\':
			var c int
			ls.next() // do not save the '\'
			switch ls.current {
			case 'a':
				c = '\a'
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'v':
				c = '\v'
			case '\n', '\r':
				ls.save('\n')
				ls.inclinenumber()
				continue
			case eoz:
				continue // raises the error next loop
			default:
				if !cIsDigit(ls.current) {
					ls.saveAndNext() // \\, \", \', \? and any other
				} else { // \xxx
					c = 0
					for i := 0; ; {
						c = 10*c + (ls.current - '0')
						ls.next()
						if i++; i >= 3 || !cIsDigit(ls.current) {
							break
						}
					}
					if c > 255 {
						ls.lexError("escape sequence too large", tkString)
					}
					ls.save(c)
				}
				continue
			}
			ls.save(c)
			ls.next()
		default:
			ls.saveAndNext()
		}
	}
	ls.saveAndNext() // skip delimiter
}

// llex reads the next token.
func (ls *lexState51) llex() token51 {
	ls.buff = ls.buff[:0]
	for {
		switch ls.current {
		case '\n', '\r':
			ls.inclinenumber()
			continue
		case '-':
			ls.next()
			if ls.current != '-' {
				return token51{token: '-'}
			}
			ls.next() // a comment
			if ls.current == '[' {
				sep := ls.skipSep()
				ls.buff = ls.buff[:0]
				if sep >= 0 {
					ls.readLongString(false, sep)
					ls.buff = ls.buff[:0]
					continue
				}
			}
			for !ls.currIsNewline() && ls.current != eoz {
				ls.next()
			}
			continue
		case '[':
			sep := ls.skipSep()
			if sep >= 0 {
				ls.readLongString(true, sep)
				return token51{token: tkString}
			} else if sep == -1 {
				return token51{token: '['}
			}
			ls.lexError("invalid long string delimiter", tkString)
		case '=':
			ls.next()
			if ls.current != '=' {
				return token51{token: '='}
			}
			ls.next()
			return token51{token: tkEq}
		case '<':
			ls.next()
			if ls.current != '=' {
				return token51{token: '<'}
			}
			ls.next()
			return token51{token: tkLe}
		case '>':
			ls.next()
			if ls.current != '=' {
				return token51{token: '>'}
			}
			ls.next()
			return token51{token: tkGe}
		case '~':
			ls.next()
			if ls.current != '=' {
				return token51{token: '~'}
			}
			ls.next()
			return token51{token: tkNe}
		case '"', '\'':
			ls.readString(ls.current)
			return token51{token: tkString}
		case '.':
			ls.saveAndNext()
			if ls.checkNext(".") {
				if ls.checkNext(".") {
					return token51{token: tkDots}
				}
				return token51{token: tkConcat}
			} else if !cIsDigit(ls.current) {
				return token51{token: '.'}
			}
			ls.readNumeral()
			return token51{token: tkNumber}
		case eoz:
			return token51{token: tkEOS}
		default:
			switch {
			case cIsSpace(ls.current):
				ls.next()
				continue
			case cIsDigit(ls.current):
				ls.readNumeral()
				return token51{token: tkNumber}
			case cIsAlpha(ls.current) || ls.current == '_':
				start := ls.offset()
				for {
					ls.saveAndNext()
					if !cIsAlnum(ls.current) && ls.current != '_' {
						break
					}
				}
				name := string(ls.buff)
				if r, ok := reserved51[name]; ok {
					return token51{token: r}
				}
				if name == "goto" {
					ls.fixes = append(ls.fixes, sourceFix{start: start, end: ls.offset(), text: GotoName})
				}
				return token51{token: tkName, name: name}
			default:
				c := ls.current
				ls.next()
				return token51{token: c} // single-char tokens (+ - / ...)
			}
		}
	}
}

// luaXNext is luaX_next.
func (ls *lexState51) luaXNext() {
	ls.lastline = ls.linenumber
	if ls.lookahead.token != tkEOS {
		ls.t = ls.lookahead
		ls.lookahead.token = tkEOS
	} else {
		ls.t = ls.llex()
	}
}

// luaXLookahead is luaX_lookahead.
func (ls *lexState51) luaXLookahead() { ls.lookahead = ls.llex() }

// ---- lparser.c ----

func (ls *lexState51) errorExpected(token int) {
	ls.syntaxError(fmt.Sprintf("'%s' expected", ls.token2str(token)))
}

// errorLimit is errorlimit.
func (ls *lexState51) errorLimit(fs *funcState51, limit int, what string) {
	var msg string
	if fs.linedefined == 0 {
		msg = fmt.Sprintf("main function has more than %d %s", limit, what)
	} else {
		msg = fmt.Sprintf("function at line %d has more than %d %s", fs.linedefined, limit, what)
	}
	ls.lexError(msg, 0)
}

// checkLimit is luaY_checklimit.
func (ls *lexState51) checkLimit(fs *funcState51, v, l int, m string) {
	if v > l {
		ls.errorLimit(fs, l, m)
	}
}

func (ls *lexState51) testNext(c int) bool {
	if ls.t.token == c {
		ls.luaXNext()
		return true
	}
	return false
}

func (ls *lexState51) check(c int) {
	if ls.t.token != c {
		ls.errorExpected(c)
	}
}

func (ls *lexState51) checkNextTok(c int) {
	ls.check(c)
	ls.luaXNext()
}

func (ls *lexState51) checkCondition(c bool, msg string) {
	if !c {
		ls.syntaxError(msg)
	}
}

// checkMatch is check_match.
func (ls *lexState51) checkMatch(what, who, where int) {
	if !ls.testNext(what) {
		if where == ls.linenumber {
			ls.errorExpected(what)
		}
		ls.syntaxError(fmt.Sprintf("'%s' expected (to close '%s' at line %d)",
			ls.token2str(what), ls.token2str(who), where))
	}
}

// strCheckName is str_checkname.
func (ls *lexState51) strCheckName() string {
	ls.check(tkName)
	name := ls.t.name
	ls.luaXNext()
	return name
}

// registerLocalVar is registerlocalvar: luaM_growvector's limit raises
// luaG_runerror's plain message (the parser runs under a C function, so
// it gets no position).
func (ls *lexState51) registerLocalVar() {
	fs := ls.fs
	if fs.nlocvars+1 > shrtMax {
		panic(&SyntaxError{Msg: "too many local variables", Line: ls.linenumber})
	}
	fs.nlocvars++
}

// newLocalVar is new_localvar: the n-th of the locals being declared.
func (ls *lexState51) newLocalVar(name string, n int) {
	fs := ls.fs
	ls.checkLimit(fs, fs.nactvar+n+1, luaiMaxVars, "local variables")
	ls.registerLocalVar()
	fs.actvar[fs.nactvar+n] = name
}

// adjustLocalVars is adjustlocalvars.
func (ls *lexState51) adjustLocalVars(nvars int) { ls.fs.nactvar += nvars }

// removeVars is removevars.
func (ls *lexState51) removeVars(tolevel int) {
	if ls.fs.nactvar > tolevel {
		ls.fs.nactvar = tolevel
	}
}

// indexUpvalue is indexupvalue.
func (ls *lexState51) indexUpvalue(fs *funcState51, v *expDesc51) int {
	for i, u := range fs.upvalues {
		if u.k == v.k && u.info == v.info {
			return i
		}
	}
	ls.checkLimit(fs, len(fs.upvalues)+1, luaiMaxUpvalues, "upvalues")
	fs.upvalues = append(fs.upvalues, upvalDesc51{k: v.k, info: v.info})
	return len(fs.upvalues) - 1
}

// searchVar is searchvar.
func searchVar(fs *funcState51, n string) int {
	for i := fs.nactvar - 1; i >= 0; i-- {
		if fs.actvar[i] == n {
			return i
		}
	}
	return -1
}

// singleVarAux is singlevaraux.
func (ls *lexState51) singleVarAux(fs *funcState51, n string, v *expDesc51, base bool) int {
	if fs == nil {
		*v = expDesc51{k: expGlobal}
		return expGlobal
	}
	if i := searchVar(fs, n); i >= 0 {
		*v = expDesc51{k: expLocal, info: i}
		return expLocal
	}
	if ls.singleVarAux(fs.prev, n, v, false) == expGlobal {
		return expGlobal
	}
	v.info = ls.indexUpvalue(fs, v)
	v.k = expUpval
	return expUpval
}

// singleVar is singlevar.
func (ls *lexState51) singleVar(v *expDesc51) {
	name := ls.strCheckName()
	ls.singleVarAux(ls.fs, name, v, true)
}

// enterLevel is enterlevel.
func (ls *lexState51) enterLevel() {
	ls.nCcalls++
	if ls.nCcalls > luaiMaxCCalls {
		ls.lexError("chunk has too many syntax levels", 0)
	}
}

func (ls *lexState51) leaveLevel() { ls.nCcalls-- }

// enterBlock is enterblock.
func (ls *lexState51) enterBlock(bl *blockCnt51, isbreakable bool) {
	fs := ls.fs
	bl.isbreakable = isbreakable
	bl.nactvar = fs.nactvar
	bl.previous = fs.bl
	fs.bl = bl
}

// leaveBlock is leaveblock.
func (ls *lexState51) leaveBlock() {
	fs := ls.fs
	bl := fs.bl
	fs.bl = bl.previous
	ls.removeVars(bl.nactvar)
}

// openFunc is open_func.
func (ls *lexState51) openFunc(fs *funcState51) {
	fs.prev = ls.fs
	ls.fs = fs
}

// closeFunc is close_func.
func (ls *lexState51) closeFunc() {
	ls.removeVars(0)
	ls.fs = ls.fs.prev
}

// luaYParser is luaY_parser: the main function is always vararg.
func luaYParser(ls *lexState51) {
	ls.setInput()
	var fs funcState51
	ls.openFunc(&fs)
	fs.isVararg = true
	ls.luaXNext()
	ls.chunk()
	ls.check(tkEOS)
	ls.closeFunc()
}

// field is field: ['.' | ':'] NAME.
func (ls *lexState51) field(v *expDesc51) {
	ls.luaXNext() // skip the dot or colon
	ls.strCheckName()
	v.k = expIndexed
}

// yIndex is yindex: '[' expr ']'.
func (ls *lexState51) yIndex() {
	ls.luaXNext()
	var v expDesc51
	ls.expr(&v)
	ls.checkNextTok(']')
}

// recField is recfield: (NAME | '['exp1']') = exp1. Its "items in a
// constructor" limit (MAX_INT) cannot be reached.
func (ls *lexState51) recField() {
	if ls.t.token == tkName {
		ls.strCheckName()
	} else {
		ls.yIndex()
	}
	ls.checkNextTok('=')
	var val expDesc51
	ls.expr(&val)
}

// constructor is constructor.
func (ls *lexState51) constructor(t *expDesc51) {
	line := ls.linenumber
	*t = expDesc51{k: expRelocable}
	ls.checkNextTok('{')
	for {
		if ls.t.token == '}' {
			break
		}
		switch ls.t.token {
		case tkName: // listfield or recfield
			ls.luaXLookahead()
			if ls.lookahead.token != '=' {
				var v expDesc51
				ls.expr(&v)
			} else {
				ls.recField()
			}
		case '[':
			ls.recField()
		default:
			var v expDesc51
			ls.expr(&v)
		}
		if !ls.testNext(',') && !ls.testNext(';') {
			break
		}
	}
	ls.checkMatch('}', '{', line)
}

// parList is parlist. LUA_COMPAT_VARARG: "..." declares the local "arg".
func (ls *lexState51) parList() {
	fs := ls.fs
	nparams := 0
	fs.isVararg = false
	if ls.t.token != ')' {
		for {
			switch ls.t.token {
			case tkName:
				ls.newLocalVar(ls.strCheckName(), nparams)
				nparams++
			case tkDots:
				ls.luaXNext()
				ls.newLocalVar("arg", nparams)
				nparams++
				fs.isVararg = true
			default:
				ls.syntaxError("<name> or '...' expected")
			}
			if fs.isVararg || !ls.testNext(',') {
				break
			}
		}
	}
	ls.adjustLocalVars(nparams)
}

// body is body: '(' parlist ')' chunk END.
func (ls *lexState51) body(e *expDesc51, needself bool, line int) {
	newFS := funcState51{linedefined: line}
	ls.openFunc(&newFS)
	ls.checkNextTok('(')
	if needself {
		ls.newLocalVar("self", 0)
		ls.adjustLocalVars(1)
	}
	ls.parList()
	ls.checkNextTok(')')
	ls.chunk()
	ls.checkMatch(tkEnd, tkFunction, line)
	ls.closeFunc()
	*e = expDesc51{k: expRelocable}
}

// expList1 is explist1: expr { ',' expr }.
func (ls *lexState51) expList1(v *expDesc51) int {
	n := 1
	ls.expr(v)
	for ls.testNext(',') {
		ls.expr(v)
		n++
	}
	return n
}

// funcArgs is funcargs.
func (ls *lexState51) funcArgs(f *expDesc51) {
	line := ls.linenumber
	switch ls.t.token {
	case '(':
		if line != ls.lastline {
			ls.syntaxError("ambiguous syntax (function call x new statement)")
		}
		ls.luaXNext()
		if ls.t.token != ')' {
			var args expDesc51
			ls.expList1(&args)
		}
		ls.checkMatch(')', '(', line)
	case '{':
		var args expDesc51
		ls.constructor(&args)
	case tkString:
		ls.luaXNext()
	default:
		ls.syntaxError("function arguments expected")
	}
	*f = expDesc51{k: expCall}
}

// prefixExp is prefixexp: NAME | '(' expr ')'. A parenthesized
// expression is discharged (luaK_dischargevars): never a variable or a
// call any more.
func (ls *lexState51) prefixExp(v *expDesc51) {
	switch ls.t.token {
	case '(':
		line := ls.linenumber
		ls.luaXNext()
		ls.expr(v)
		ls.checkMatch(')', '(', line)
		*v = expDesc51{k: expNonReloc}
	case tkName:
		ls.singleVar(v)
	default:
		ls.syntaxError("unexpected symbol")
	}
}

// primaryExp is primaryexp:
// prefixexp { '.' NAME | '[' exp ']' | ':' NAME funcargs | funcargs }.
func (ls *lexState51) primaryExp(v *expDesc51) {
	ls.prefixExp(v)
	for {
		switch ls.t.token {
		case '.':
			ls.field(v)
		case '[':
			ls.yIndex()
			v.k = expIndexed
		case ':':
			ls.luaXNext()
			ls.strCheckName()
			ls.funcArgs(v)
		case '(', tkString, '{':
			ls.funcArgs(v)
		default:
			return
		}
	}
}

// simpleExp is simpleexp.
func (ls *lexState51) simpleExp(v *expDesc51) {
	switch ls.t.token {
	case tkNumber:
		*v = expDesc51{k: expKNum}
	case tkString:
		*v = expDesc51{k: expK}
	case tkNil:
		*v = expDesc51{k: expNil}
	case tkTrue:
		*v = expDesc51{k: expTrue}
	case tkFalse:
		*v = expDesc51{k: expFalse}
	case tkDots:
		ls.checkCondition(ls.fs.isVararg, "cannot use '...' outside a vararg function")
		*v = expDesc51{k: expVararg}
	case '{':
		ls.constructor(v)
		return
	case tkFunction:
		ls.luaXNext()
		ls.body(v, false, ls.linenumber)
		return
	default:
		ls.primaryExp(v)
		return
	}
	ls.luaXNext()
}

// binary operator priorities (priority[] in lparser.c), by token; 0 is
// OPR_NOBINOPR.
func binaryPriority(token int) (left, right int) {
	switch token {
	case '+', '-':
		return 6, 6
	case '*', '/', '%':
		return 7, 7
	case '^':
		return 10, 9
	case tkConcat:
		return 5, 4
	case tkNe, tkEq, '<', tkLe, '>', tkGe:
		return 3, 3
	case tkAnd:
		return 2, 2
	case tkOr:
		return 1, 1
	}
	return 0, 0
}

const unaryPriority = 8 // UNARY_PRIORITY

// subExpr is subexpr: (simpleexp | unop subexpr) { binop subexpr }, for
// binary operators with a priority higher than limit. It returns the
// first operator it leaves (its token, or 0).
func (ls *lexState51) subExpr(v *expDesc51, limit int) int {
	ls.enterLevel()
	switch ls.t.token {
	case tkNot, '-', '#':
		ls.luaXNext()
		ls.subExpr(v, unaryPriority)
		*v = expDesc51{k: expRelocable}
	default:
		ls.simpleExp(v)
	}
	op := ls.t.token
	left, right := binaryPriority(op)
	for left > 0 && left > limit {
		ls.luaXNext()
		var v2 expDesc51
		nextop := ls.subExpr(&v2, right)
		*v = expDesc51{k: expRelocable}
		op = nextop
		left, right = binaryPriority(op)
	}
	ls.leaveLevel()
	return op
}

func (ls *lexState51) expr(v *expDesc51) { ls.subExpr(v, 0) }

// blockFollow is block_follow.
func blockFollow(token int) bool {
	switch token {
	case tkElse, tkElseif, tkEnd, tkUntil, tkEOS:
		return true
	}
	return false
}

// block is block.
func (ls *lexState51) block() {
	var bl blockCnt51
	ls.enterBlock(&bl, false)
	ls.chunk()
	ls.leaveBlock()
}

// assignment is assignment: the left-hand side so far is lh, nvars
// variables long.
func (ls *lexState51) assignment(lh *expDesc51, nvars int) {
	ls.checkCondition(expLocal <= lh.k && lh.k <= expIndexed, "syntax error")
	if ls.testNext(',') {
		var nv expDesc51
		ls.primaryExp(&nv)
		ls.checkLimit(ls.fs, nvars, luaiMaxCCalls-ls.nCcalls, "variables in assignment")
		ls.assignment(&nv, nvars+1)
		return
	}
	ls.checkNextTok('=')
	var e expDesc51
	ls.expList1(&e)
}

// cond is cond.
func (ls *lexState51) cond() {
	var v expDesc51
	ls.expr(&v)
}

// breakStat is breakstat.
func (ls *lexState51) breakStat() {
	bl := ls.fs.bl
	for bl != nil && !bl.isbreakable {
		bl = bl.previous
	}
	if bl == nil {
		ls.syntaxError("no loop to break")
	}
}

// whileStat is whilestat: WHILE cond DO block END.
func (ls *lexState51) whileStat(line int) {
	ls.luaXNext()
	ls.cond()
	var bl blockCnt51
	ls.enterBlock(&bl, true)
	ls.checkNextTok(tkDo)
	ls.block()
	ls.checkMatch(tkEnd, tkWhile, line)
	ls.leaveBlock()
}

// repeatStat is repeatstat: REPEAT block UNTIL cond; the condition sees
// the block's locals.
func (ls *lexState51) repeatStat(line int) {
	var bl1, bl2 blockCnt51
	ls.enterBlock(&bl1, true)
	ls.enterBlock(&bl2, false)
	ls.luaXNext()
	ls.chunk()
	ls.checkMatch(tkUntil, tkRepeat, line)
	ls.cond()
	ls.leaveBlock()
	ls.leaveBlock()
}

// forBody is forbody: DO block.
func (ls *lexState51) forBody(nvars int) {
	ls.adjustLocalVars(3) // control variables
	ls.checkNextTok(tkDo)
	var bl blockCnt51
	ls.enterBlock(&bl, false)
	ls.adjustLocalVars(nvars)
	ls.block()
	ls.leaveBlock()
}

// forNum is fornum: NAME = exp1,exp1[,exp1] forbody.
func (ls *lexState51) forNum(varname string) {
	ls.newLocalVar("(for index)", 0)
	ls.newLocalVar("(for limit)", 1)
	ls.newLocalVar("(for step)", 2)
	ls.newLocalVar(varname, 3)
	ls.checkNextTok('=')
	var e expDesc51
	ls.expr(&e)
	ls.checkNextTok(',')
	ls.expr(&e)
	if ls.testNext(',') {
		ls.expr(&e)
	}
	ls.forBody(1)
}

// forList is forlist: NAME {,NAME} IN explist1 forbody.
func (ls *lexState51) forList(indexname string) {
	nvars := 0
	for _, n := range []string{"(for generator)", "(for state)", "(for control)", indexname} {
		ls.newLocalVar(n, nvars)
		nvars++
	}
	for ls.testNext(',') {
		ls.newLocalVar(ls.strCheckName(), nvars)
		nvars++
	}
	ls.checkNextTok(tkIn)
	var e expDesc51
	ls.expList1(&e)
	ls.forBody(nvars - 3)
}

// forStat is forstat: FOR (fornum | forlist) END.
func (ls *lexState51) forStat(line int) {
	var bl blockCnt51
	ls.enterBlock(&bl, true)
	ls.luaXNext()
	varname := ls.strCheckName()
	switch ls.t.token {
	case '=':
		ls.forNum(varname)
	case ',', tkIn:
		ls.forList(varname)
	default:
		ls.syntaxError("'=' or 'in' expected")
	}
	ls.checkMatch(tkEnd, tkFor, line)
	ls.leaveBlock()
}

// testThenBlock is test_then_block: [IF | ELSEIF] cond THEN block.
func (ls *lexState51) testThenBlock() {
	ls.luaXNext()
	ls.cond()
	ls.checkNextTok(tkThen)
	ls.block()
}

// ifStat is ifstat.
func (ls *lexState51) ifStat(line int) {
	ls.testThenBlock()
	for ls.t.token == tkElseif {
		ls.testThenBlock()
	}
	if ls.t.token == tkElse {
		ls.luaXNext()
		ls.block()
	}
	ls.checkMatch(tkEnd, tkIf, line)
}

// localFunc is localfunc: the name is in scope in the body.
func (ls *lexState51) localFunc() {
	ls.newLocalVar(ls.strCheckName(), 0)
	ls.adjustLocalVars(1)
	var b expDesc51
	ls.body(&b, false, ls.linenumber)
}

// localStat is localstat: LOCAL NAME {',' NAME} ['=' explist1].
func (ls *lexState51) localStat() {
	nvars := 0
	for {
		ls.newLocalVar(ls.strCheckName(), nvars)
		nvars++
		if !ls.testNext(',') {
			break
		}
	}
	if ls.testNext('=') {
		var e expDesc51
		ls.expList1(&e)
	}
	ls.adjustLocalVars(nvars)
}

// funcName is funcname: NAME {field} [':' NAME].
func (ls *lexState51) funcName(v *expDesc51) bool {
	needself := false
	ls.singleVar(v)
	for ls.t.token == '.' {
		ls.field(v)
	}
	if ls.t.token == ':' {
		needself = true
		ls.field(v)
	}
	return needself
}

// funcStat is funcstat: FUNCTION funcname body.
func (ls *lexState51) funcStat(line int) {
	ls.luaXNext()
	var v, b expDesc51
	needself := ls.funcName(&v)
	ls.body(&b, needself, line)
}

// exprStat is exprstat: a call or an assignment.
func (ls *lexState51) exprStat() {
	var v expDesc51
	ls.primaryExp(&v)
	if v.k != expCall {
		ls.assignment(&v, 1)
	}
}

// retStat is retstat: RETURN [explist].
func (ls *lexState51) retStat() {
	ls.luaXNext()
	if !blockFollow(ls.t.token) && ls.t.token != ';' {
		var e expDesc51
		ls.expList1(&e)
	}
}

// statement is statement; it reports whether the statement must be the
// last of its block.
func (ls *lexState51) statement() bool {
	line := ls.linenumber
	switch ls.t.token {
	case tkIf:
		ls.ifStat(line)
	case tkWhile:
		ls.whileStat(line)
	case tkDo:
		ls.luaXNext()
		ls.block()
		ls.checkMatch(tkEnd, tkDo, line)
	case tkFor:
		ls.forStat(line)
	case tkRepeat:
		ls.repeatStat(line)
	case tkFunction:
		ls.funcStat(line)
	case tkLocal:
		ls.luaXNext()
		if ls.testNext(tkFunction) {
			ls.localFunc()
		} else {
			ls.localStat()
		}
	case tkReturn:
		ls.retStat()
		return true
	case tkBreak:
		ls.luaXNext()
		ls.breakStat()
		return true
	default:
		ls.exprStat()
	}
	return false
}

// chunk is chunk: { stat [';'] }.
func (ls *lexState51) chunk() {
	islast := false
	ls.enterLevel()
	for !islast && !blockFollow(ls.t.token) {
		islast = ls.statement()
		ls.testNext(';')
	}
	ls.leaveLevel()
}
