package gen

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	rediscmd "github.com/luagen/luagen/internal/commands"
	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// origin is where a value used as a key comes from, ordered from safe to
// unsafe: joining two origins keeps the worse one.
type origin int

const (
	// fromTagged is a value that carries a key family's hash tag by
	// construction: a key or an ---@arg laid out in a family (the queue's
	// prefix bull:{q}:), or text appended to one (prefix .. id .. ':logs').
	// A key built that way shares the family's slot.
	fromTagged  origin = iota
	fromKeys           // KEYS[n], or a local only ever assigned from KEYS
	fromUnknown        // a parameter, a table field, a call luagen cannot see into
	fromLiteral        // a string or number literal in the script
	fromArgv           // ARGV[n], or a local assigned from it
	fromBuilt          // built in Lua: .., string.format, a string method, a reply
)

type taint struct {
	origin origin
	why    string // "comes from ARGV[2]", "is built in Lua (string concatenation)", ...
	via    string // the local it reached the call through, if any
}

func (t taint) String() string {
	if t.via != "" {
		return t.why + " (via local " + t.via + ")"
	}
	return t.why
}

func join(a, b taint) taint {
	if b.origin > a.origin {
		return b
	}
	return a
}

// binding is one local variable (or parameter, or loop variable).
type binding struct {
	name   string
	values []ast.Expr // every expression assigned to it
	fixed  *taint     // set for parameters and loop variables
	memo   *taint
	busy   bool
	fn     *fnState // the function it is a local of
	// alias is "redis.call" or "redis.pcall" for a local declared with
	// that value (local rcall = redis.call): a call of it is that call.
	alias string
	// param is the function whose index-th parameter this is: its value
	// is what the function's calls pass there, when the function is a
	// local the script only calls (see paramTaint).
	param *ast.FunctionExpr
	index int
	// bare is set for a local declared without a value (local f), which
	// a later assignment gives one: a forward-declared function.
	bare bool
	// decoded is the arg whose decoded value the local holds (local args
	// = cmsgpack.unpack(ARGV[1])): its elements are what ---@elem says,
	// unless decodedChanged: the script writes it or uses it otherwise
	// than by reading its elements.
	decoded        string
	decodedChanged bool
	// init is the value of a local declared alone with one (local x = e);
	// reassigned is set once the script assigns the local again. guards
	// are the if conditions its declaration runs under, which hold
	// wherever it is in scope (narrow.go).
	init       ast.Expr
	reassigned bool
	guards     []guard
	// argvElem is set for a local that holds an element of ARGV at an
	// index the analysis does not know: local a, b = unpack(ARGV), or the
	// value of for _, v in ipairs(ARGV) (the number checks then bound it
	// by every arg's type).
	argvElem bool
	// forLoop is the numeric for whose variable this is: its values lie
	// between the loop's start and its limit (the number checks).
	forLoop *ast.NumberForStmt
	// multi is the call whose multiIndex-th value a local declared from
	// a call's values holds (local ok, v = pcall(...)).
	multi      *ast.FuncCallExpr
	multiIndex int
	// loops is how many loops enclose the declaration; runsOnce holds the
	// values assigned in the same function at that depth, which run at
	// most once each time the declaration does.
	loops    int
	runsOnce map[ast.Expr]bool
	// later are the later values of calls assigned to it (p, q = f()).
	later []laterVal
}

// laterVal is the index-th value (from 0) of a call.
type laterVal struct {
	call  *ast.FuncCallExpr
	index int
}

type scope struct {
	parent *scope
	vars   map[string]*binding
	n      int // locals declared in it, hidden ones included (Lua counts a redeclared name again)
}

func (s *scope) lookup(name string) *binding {
	for ; s != nil; s = s.parent {
		if b := s.vars[name]; b != nil {
			return b
		}
	}
	return nil
}

// linter walks one script's Lua AST once, in source order, and then checks
// what it saw against the header.
type linter struct {
	r        *reporter
	s        *Script
	loc      *locator
	scope    *scope
	resolved map[*ast.IdentExpr]*binding
	calls    []*callSite
	keys     usage
	argv     usage
	regexps  map[string]*regexp.Regexp
	// uses of what ---@coalesce refuses (coalesce.go)
	coalesceUses []coalesceUse
	fn           *fnState   // the function being walked (limits.go)
	loops        int        // loops enclosing the statement being walked (in any function)
	fns          []*fnState // every function, the main chunk first
	line         int        // line of the statement being walked
	walk         *luaWalk   // the walk of the chunk, with l's hooks
	// method is the function a method definition (function a:b()) declares,
	// whose parameters begin with an implicit self.
	method *ast.FunctionExpr
	// aliasInit holds the redis.call and redis.pcall values that declare
	// an alias (local rcall = redis.call): the one use of them as a value
	// the analysis follows.
	aliasInit map[ast.Expr]bool
	// callOf maps the name in a call of a local (f in f(x)) to the call;
	// calls and escaped record, per function held by a local, its direct
	// calls and whether it is used otherwise (passed on, stored).
	callOf  map[*ast.IdentExpr]*ast.FuncCallExpr
	fnCalls map[*binding][]callRec
	escaped map[*binding]bool
	owner   map[*ast.FunctionExpr]*binding // the local a function is assigned to
	// undefined are reads of globals Redis does not define; globalDefs the
	// globals the script assigns (reported as such).
	undefined  []undefinedRead
	globalDefs map[string]bool
	declaredAt map[string]int // the line of the first local of each name
	// guards are the if conditions the walk is under; ifSeen the ifs whose
	// then-block it has entered; falsy memoizes alwaysFalsy (deadcode.go).
	guards []guard
	ifSeen map[*ast.IfStmt]bool
	falsy  map[*binding]bool
	// directFn holds the redis.<name> of direct calls (redis.error_reply(...)).
	directFn map[*ast.AttrGetExpr]bool
	// zeroChecked holds the locals an if rules out as zero divisors
	// (noteZeroGuard, zeroDivisor).
	zeroChecked map[*binding]bool
	// divGuards are the if conditions each division runs under.
	divGuards map[*ast.ArithmeticOpExpr][]guard
	// readUse and writeUse mark the names of a table (KEYS, ARGV, a
	// decoded arg) where an enclosing expression reads it (T[i], #T,
	// ipairs(T)) or writes it (T[i] = x, rawset(T, ...)); writeTarget
	// holds the T[i] an assignment writes (see tableUse).
	readUse, writeUse map[*ast.IdentExpr]bool
	writeTarget       map[*ast.AttrGetExpr]bool
	metatables        bool                       // the script calls setmetatable or debug.*
	forIn             map[*ast.FuncCallExpr]bool // the iterator call of each generic for
}

// usage is how a script reads KEYS or ARGV.
type usage struct {
	indexes map[int]bool // literal indexes read: KEYS[2]
	dynamic bool         // KEYS[i], #KEYS, ipairs(KEYS), unpack(KEYS), KEYS passed on
}

// indexRe matches name[<expression>] in masked source, capturing the
// expression. Patterns are compiled once per script.
func (l *linter) indexRe(name string) *regexp.Regexp {
	if re := l.regexps[name]; re != nil {
		return re
	}
	re := regexp.MustCompile(`\b` + name + `\s*\[\s*([^\]]*?)\s*\]`)
	l.regexps[name] = re
	return re
}

type callSite struct {
	call *ast.FuncCallExpr
	fn   string // "redis.call" or "redis.pcall"
	pos  Pos
	args []Pos // position of each argument, when found
	// guards are the if conditions it runs under (deadcode.go).
	guards []guard
}

// argPos is the position of argument i (0 is the command), or of the call
// when it was not found.
func (c *callSite) argPos(i int) Pos {
	if i < len(c.args) {
		return c.args[i]
	}
	return c.pos
}

// reReplyFn finds redis.error_reply and redis.status_reply (or
// redis["..."], whose string the locator's masked text blanks).
var reReplyFn = map[string]*regexp.Regexp{
	"error_reply":  regexp.MustCompile(`\bredis\s*(?:\.\s*error_reply\b|\[)`),
	"status_reply": regexp.MustCompile(`\bredis\s*(?:\.\s*status_reply\b|\[)`),
}

var (
	reErrorCall = regexp.MustCompile(`\berror\s*[({'"\[]`)
	reRedisCall = regexp.MustCompile(`\bredis\s*\.\s*(?:p?call)\b`)
)

// lintLua parses the script with gopher-lua and checks its use of KEYS and
// ARGV, its keys' cluster safety, and its replies against the header. src is the whole file.
// It returns the locator it used (nil after a syntax error), whose work
// count tests read.
func lintLua(r *reporter, s *Script, src string, lines []string) *locator {
	// Redis strips line 1 when it is a shebang; a #! line elsewhere was
	// reported by the header parser. Blank both so the parser sees Lua and
	// line numbers stay.
	parsed := []byte(src)
	_, starts := splitLines(src)
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimLeft(line, " \t"), "#!") {
			for j := starts[i]; j < starts[i]+len(line); j++ {
				parsed[j] = ' '
			}
		}
	}
	code, _, open := maskOpen(string(parsed))
	chunk, err := parse.Parse(strings.NewReader(string(parsed)), s.Path)
	if err != nil {
		reportSyntax(r, err, string(parsed), lines, open)
		return nil
	}
	l := &linter{r: r, s: s, loc: newLocator(code), resolved: map[*ast.IdentExpr]*binding{}, regexps: map[string]*regexp.Regexp{}, aliasInit: map[ast.Expr]bool{},
		callOf: map[*ast.IdentExpr]*ast.FuncCallExpr{}, fnCalls: map[*binding][]callRec{}, ifSeen: map[*ast.IfStmt]bool{}, falsy: map[*binding]bool{}, escaped: map[*binding]bool{}, owner: map[*ast.FunctionExpr]*binding{}, globalDefs: map[string]bool{}, declaredAt: map[string]int{}, directFn: map[*ast.AttrGetExpr]bool{}, readUse: map[*ast.IdentExpr]bool{}, writeUse: map[*ast.IdentExpr]bool{}, writeTarget: map[*ast.AttrGetExpr]bool{}, zeroChecked: map[*binding]bool{}, forIn: map[*ast.FuncCallExpr]bool{}, divGuards: map[*ast.ArithmeticOpExpr][]guard{},
		keys: usage{indexes: map[int]bool{}}, argv: usage{indexes: map[int]bool{}}}
	l.walk = &luaWalk{stmt: l.stmt, expr: l.expr, assign: l.assign, open: l.open, close: l.close}
	l.enter(1)
	l.push()
	l.walk.stmts(chunk)
	l.pop()
	l.checkUnused("key", "KEYS", s.keySlots, l.keys)
	l.checkUnused("arg", "ARGV", s.argSlots, l.argv)
	l.checkKept()
	l.checkUndefined()
	if s.UnsafeKeys == "" {
		for _, c := range l.calls {
			if l.dead(c.guards) {
				l.checkCommand(c) // a branch no caller takes: its keys never reach Redis
				continue
			}
			l.checkCall(c)
		}
	} else {
		for _, c := range l.calls {
			l.checkCommand(c) // not-in-scripts and no-writes still apply
		}
	}
	l.checkReplies(chunk)
	l.checkCoalesce()
	l.checkLimits()
	return l.loc
}

// reportSyntax reports a parse error. open is where the first string,
// long string or long comment that is never closed opens (see maskOpen),
// or -1: Lua's lexer notices one only where the line or file ends, so the
// report points at the opening instead.
func reportSyntax(r *reporter, err error, src string, lines []string, open int) {
	pe, ok := err.(*parse.Error)
	if !ok {
		r.errorf(Pos{1, 1}, "Lua syntax error: %v", err)
		return
	}
	msg := strings.TrimSpace(pe.Message)
	if open >= 0 && (strings.HasPrefix(msg, "unterminated") || strings.Contains(msg, "multiline comment")) {
		what := "this string is never closed"
		if lvl, ok := longBracket(src, open+2); ok && strings.HasPrefix(src[open:], "--") {
			what = "this long comment is never closed: it needs ]" + strings.Repeat("=", lvl) + "]"
		} else if lvl, ok := longBracket(src, open); ok {
			what = "this long string is never closed: it needs ]" + strings.Repeat("=", lvl) + "]"
		}
		r.errorf(newLocator(src).offset(open), "Lua syntax error: %s", what)
		return
	}
	if pe.Pos.Line == parse.EOF || pe.Pos.Line > len(lines) {
		last := len(lines)
		hint := ""
		if msg == "syntax error" {
			hint = " (a missing end?)"
		}
		r.errorf(Pos{last, len(lines[last-1]) + 1}, "Lua syntax error at the end of the file: %s%s", msg, hint)
		return
	}
	// gopher-lua records the position after the token; point at its start.
	p := Pos{pe.Pos.Line, pe.Pos.Column - len(pe.Token) + 1}
	if pe.Token != "" {
		msg += fmt.Sprintf(" near %q", pe.Token)
	}
	r.errorf(p, "Lua syntax error: %s", msg)
}

// --- walking ---

func (l *linter) push() { l.scope = &scope{parent: l.scope, vars: map[string]*binding{}} }
func (l *linter) pop() {
	l.fn.active -= l.scope.n
	l.scope = l.scope.parent
}

func (l *linter) declare(name string, fixed *taint, values ...ast.Expr) *binding {
	b := &binding{name: name, fixed: fixed, values: values, fn: l.fn, guards: l.guardsNow(), loops: l.loops}
	l.scope.vars[name] = b
	l.addLocals(1, l.line)
	if _, ok := l.declaredAt[name]; !ok {
		l.declaredAt[name] = l.line
	}
	if name == "KEYS" || name == "ARGV" {
		// KEYS[n] through it would be whatever it holds, yet every check
		// reads KEYS and ARGV as the caller's.
		l.r.errorf(l.loc.find(l.line, l.wordRe(name)), "a local named %s hides the global %s, which every check reads as what the caller sent (KEYS[n] a declared key, ARGV[n] a declared arg); name it otherwise", name, name)
	}
	return b
}

// stmt is the walk's hook before a statement.
func (l *linter) stmt(st ast.Stmt) bool {
	l.line = st.Line()
	switch st := st.(type) {
	case *ast.LocalAssignStmt:
		for _, e := range st.Exprs {
			if l.redisFn(e) != "" {
				l.aliasInit[e] = true
			}
		}
		if l.localFunction(st) {
			// local function f: f is in scope in its own body, an upvalue
			// of it when it calls itself.
			b := l.declare(st.Names[0], nil, st.Exprs[0])
			l.owner[st.Exprs[0].(*ast.FunctionExpr)] = b
			return true
		}
		l.walk.stmtParts(st) // the values first: in local x = x, the second x is another
		for i, name := range st.Names {
			switch {
			case i < len(st.Exprs) && (i < len(st.Exprs)-1 || !multi(st.Exprs[i]) || l.singleValue(st.Exprs[i])):
				b := l.declare(name, nil, st.Exprs[i])
				b.alias = l.redisFn(st.Exprs[i])
				if fe, ok := st.Exprs[i].(*ast.FunctionExpr); ok {
					l.owner[fe] = b
				}
			case len(st.Exprs) > 0 && i >= len(st.Exprs)-1 && multi(st.Exprs[len(st.Exprs)-1]):
				last := st.Exprs[len(st.Exprs)-1]
				t := l.elemTaint(last)
				b := l.declare(name, &t)
				if c, ok := last.(*ast.FuncCallExpr); ok {
					b.multi, b.multiIndex = c, i-(len(st.Exprs)-1)
				}
				if c, ok := last.(*ast.FuncCallExpr); ok && l.isUnpack(c) && l.isGlobal(c.Args[0], "ARGV") {
					b.argvElem = true
				}
				if i == len(st.Exprs)-1 {
					b.decoded = l.decodedArg(last)
				}
			default:
				// nil: no key, so it adds no origin (as a nil argument does);
				// a later assignment gives the local its values.
				b := l.declare(name, &taint{origin: fromTagged})
				b.bare = len(st.Exprs) == 0
			}
		}
		if len(st.Names) == 1 && len(st.Exprs) == 1 {
			l.scope.vars[st.Names[0]].init = st.Exprs[0]
		}
		return false
	case *ast.AssignStmt:
		for _, lhs := range st.Lhs {
			if a, ok := lhs.(*ast.AttrGetExpr); ok {
				l.writeTarget[a] = true
				if l.isGlobal(a.Object, "KEYS") || l.isGlobal(a.Object, "ARGV") {
					l.argWrite(a.Object.(*ast.IdentExpr))
				}
			}
		}
	case *ast.GenericForStmt:
		if len(st.Exprs) == 1 {
			if c, ok := st.Exprs[0].(*ast.FuncCallExpr); ok {
				l.forIn[c] = true
			}
		}
	case *ast.FuncDefStmt:
		if id, ok := st.Name.Func.(*ast.IdentExpr); ok && l.scope.lookup(id.Value) == nil {
			l.globalAssign(id, "defines")
		}
		if st.Name.Method != "" {
			l.method = st.Func
		}
	}
	return true
}

// assign is the walk's hook for a name assigned to: st.Lhs[i].
func (l *linter) assign(st *ast.AssignStmt, i int, id *ast.IdentExpr) {
	b := l.scope.lookup(id.Value)
	if b == nil {
		l.globalAssign(id, "assigns")
		return
	}
	l.ref(b)
	l.resolved[id] = b
	b.reassigned = true
	if i < len(st.Rhs) {
		if fe, ok := st.Rhs[i].(*ast.FunctionExpr); ok {
			l.owner[fe] = b
		}
	}
	if b.alias != "" {
		l.r.errorf(l.loc.find(id.Line(), l.wordRe(regexp.QuoteMeta(id.Value))), "%s is assigned again here, so the analysis cannot tell what its calls run; it follows an alias of %s only when the local is assigned once, where it is declared (local %s = %s)", id.Value, b.alias, id.Value, b.alias)
	}
	if n := len(st.Rhs); i >= n-1 && n > 0 && i > 0 {
		if c, ok := st.Rhs[n-1].(*ast.FuncCallExpr); ok && i > n-1 {
			// p, q = f(x): q is f's second value.
			b.later = append(b.later, laterVal{c, i - (n - 1)})
			return
		}
	}
	if i < len(st.Rhs) {
		b.values = append(b.values, st.Rhs[i])
		if l.fn == b.fn && l.loops == b.loops {
			if b.runsOnce == nil {
				b.runsOnce = map[ast.Expr]bool{}
			}
			b.runsOnce[st.Rhs[i]] = true
		}
	} else {
		b.fixed = &taint{origin: fromUnknown, why: ""}
	}
}

// open is the walk's hook where a block's scope begins: it declares the
// names of a loop and the parameters of a function, and starts counting a
// function's locals.
func (l *linter) open(owner ast.PositionHolder) {
	if st, ok := owner.(*ast.IfStmt); ok {
		l.openIf(st)
	}
	if isLoop(owner) {
		l.loops++
	}
	switch o := owner.(type) {
	case *ast.NumberForStmt:
		l.push()
		l.addLocals(3, o.Line()) // (for index), (for limit), (for step)
		l.declare(o.Name, &taint{origin: fromUnknown, why: ""}).forLoop = o
	case *ast.GenericForStmt:
		elem := taint{origin: fromUnknown, why: ""}
		argv := false
		if len(o.Exprs) == 1 {
			if c, ok := o.Exprs[0].(*ast.FuncCallExpr); ok && len(c.Args) == 1 && (l.isGlobal(c.Func, "ipairs") || l.isGlobal(c.Func, "pairs")) {
				elem = l.tableElems(c.Args[0])
				argv = l.isGlobal(c.Args[0], "ARGV")
			}
		}
		l.push()
		l.addLocals(3, o.Line()) // (for generator), (for state), (for control)
		for i, name := range o.Names {
			if i == 1 {
				l.declare(name, &elem).argvElem = argv
			} else {
				l.declare(name, &taint{origin: fromUnknown, why: ""})
			}
		}
	case *ast.FunctionExpr:
		outer := l.line
		l.enter(o.Line())
		l.fn.expr, l.fn.outerLine = o, outer
		l.line = o.Line()
		l.push()
		if l.method == o {
			l.declare("self", &taint{origin: fromUnknown, why: ""})
		}
		for i, p := range o.ParList.Names {
			b := l.declare(p, nil)
			b.param, b.index = o, i
			if l.method == o {
				b.param = nil // called as a field, which the analysis does not follow
				b.fixed = &taint{origin: fromUnknown, why: ""}
			}
		}
		if o.ParList.HasVargs {
			// Lua 5.1 (LUA_COMPAT_VARARG) declares arg, a table of the
			// varargs, after the parameters of a function(...).
			l.addLocals(1, o.Line())
			l.scope.vars["arg"] = &binding{name: "arg", fixed: &taint{origin: fromUnknown, why: ""}, fn: l.fn}
		}
	default:
		l.push()
	}
}

// close is the walk's hook where a block's scope ends.
func (l *linter) close(owner ast.PositionHolder) {
	l.pop()
	if isLoop(owner) {
		l.loops--
	}
	if _, ok := owner.(*ast.IfStmt); ok {
		l.closeIf()
	}
	if _, ok := owner.(*ast.FunctionExpr); ok {
		l.line = l.fn.outerLine
		l.fn = l.fn.parent
	}
}

// localFunction reports whether st is "local function name" rather than
// "local name = function", which gopher-lua parses to the same statement.
func (l *linter) localFunction(st *ast.LocalAssignStmt) bool {
	if len(st.Names) != 1 || len(st.Exprs) != 1 {
		return false
	}
	if _, ok := st.Exprs[0].(*ast.FunctionExpr); !ok || st.Line() < 1 || st.Line() > len(l.loc.lines) {
		return false
	}
	re := l.wordRe(`local\s+function\s+` + regexp.QuoteMeta(st.Names[0]))
	return re.MatchString(l.loc.lines[st.Line()-1])
}

// argWrite reports a store into the global KEYS or ARGV (an element, or
// table.insert, remove or sort of it): Redis allows it, but every check
// reads KEYS[n] and ARGV[n] as the caller sent them, so a key written there
// (KEYS[1] = ARGV[1]) would escape the cluster lint.
func (l *linter) argWrite(id *ast.IdentExpr) {
	l.r.errorf(l.loc.find(id.Line(), l.wordRe(id.Value)), "this changes %s, which every check reads as what the caller sent (KEYS[n] a declared key, ARGV[n] a declared arg), so what the script stores there escapes them; copy it into a local table and change that", id.Value)
}

// globalAssign reports an assignment to the global id (how says what
// the statement does to it): Redis 7 makes a script's globals read-only.
func (l *linter) globalAssign(id *ast.IdentExpr, how string) {
	l.globalDefs[id.Value] = true
	at := l.loc.find(id.Line(), l.wordRe(regexp.QuoteMeta(id.Value)))
	if id.Value == "KEYS" || id.Value == "ARGV" {
		l.r.errorf(at, "this %s the global %s, which fails at run time: Redis 7 makes a script's globals read-only (\"Attempt to modify a readonly table\"), yet in a merged run (---@coalesce) or a function library (-functions) %s is a parameter and the assignment would succeed; copy it into a local of another name instead", how, id.Value, id.Value)
		return
	}
	l.r.errorf(at, "this %s the global %s, which fails at run time: Redis 7 makes a script's globals read-only (\"Attempt to modify a readonly table\"); declare it local", how, id.Value)
}

// bound is which sides a local is compared against a number literal.

// sandboxGlobals are the globals a script can read on Redis 7.0: what
// pairs(_G) lists in an EVAL (TestSandboxGlobals checks it against
// redis-server). Redis makes the table read-only and raises on a read of
// any other name (luaSetErrorMetatable).
var sandboxGlobals = map[string]bool{
	"ARGV": true, "KEYS": true, "_G": true, "_VERSION": true, "__redis__err__handler": true,
	"assert": true, "bit": true, "cjson": true, "cmsgpack": true, "collectgarbage": true,
	"coroutine": true, "error": true, "gcinfo": true, "getmetatable": true, "ipairs": true,
	"load": true, "loadstring": true, "math": true, "next": true, "pairs": true, "pcall": true,
	"rawequal": true, "rawget": true, "rawset": true, "redis": true, "select": true,
	"setmetatable": true, "string": true, "struct": true, "table": true, "tonumber": true,
	"tostring": true, "type": true, "unpack": true, "xpcall": true,
}

// undefinedRead is a read of a global that Redis does not define.
type undefinedRead struct {
	id   *ast.IdentExpr
	hint string
}

// undefinedHint suggests what a read of the undefined global e meant: a
// local in scope or a global of Redis' Lua with a close name, else a
// missing include.
func (l *linter) undefinedHint(e *ast.IdentExpr) string {
	var names []string
	for sc := l.scope; sc != nil; sc = sc.parent {
		for n := range sc.vars {
			names = append(names, n)
		}
	}
	for n := range sandboxGlobals {
		names = append(names, n)
	}
	slices.Sort(names)
	if c := closest(e.Value, names); c != "" {
		return fmt.Sprintf("did you mean %s?", c)
	}
	return "a missing or misplaced include (an included helper must come before the line that uses it), or a typo?"
}

// checkUndefined reports each read of a global that neither the script
// (its globals are read-only, so it defines none), its includes nor Redis
// defines, which Redis answers with "Script attempted to access
// nonexistent global variable". A name the script assigns as a global is
// reported there already.
func (l *linter) checkUndefined() {
	for _, u := range l.undefined {
		if l.globalDefs[u.id.Value] {
			continue
		}
		if line, ok := l.declaredAt[u.id.Value]; ok && line >= u.id.Line() {
			path, n := l.s.Position(line)
			u.hint = fmt.Sprintf("a local %s is declared at %s:%d, after this use: move this use (or the include that holds it) below that line", u.id.Value, path, n)
		}
		l.r.errorf(l.loc.find(u.id.Line(), l.wordRe(regexp.QuoteMeta(u.id.Value))),
			"%s is not defined here: no local in scope, no include before this line and no global of Redis' Lua has that name, so Redis fails the call (\"Script attempted to access nonexistent global variable '%s'\"); %s", u.id.Value, u.id.Value, u.hint)
	}
}

// isGlobal reports whether e names the global variable name (not shadowed
// by a local).
func (l *linter) isGlobal(e ast.Expr, name string) bool {
	id, ok := e.(*ast.IdentExpr)
	// During the walk the scope says; after it (the checks of calls and
	// keys), what the walk resolved the name to (local string = ... makes
	// string.sub another function there).
	return ok && id.Value == name && l.scope.lookup(name) == nil && l.resolved[id] == nil
}

// expr is the walk's hook before an expression.
func (l *linter) expr(e ast.Expr) bool {
	l.noteGlobal(e)
	l.markTableUse(e)
	switch e := e.(type) {
	case *ast.IdentExpr:
		if b := l.scope.lookup(e.Value); b != nil {
			l.resolved[e] = b
			if b.decoded != "" && !l.readUse[e] {
				// args[1] = x, table.insert(args, ...), local a = args,
				// f(args): the elements ---@elem describes may not be
				// what the caller sent any more.
				b.decodedChanged = true
			}
			l.ref(b)
			if c := l.callOf[e]; c != nil {
				l.fnCalls[b] = append(l.fnCalls[b], callRec{call: c, guards: l.guardsNow()})
			} else {
				l.escaped[b] = true
			}
			if b.alias != "" { // a direct call does not walk its function: see FuncCallExpr
				l.r.errorf(l.loc.find(e.Line(), l.wordRe(regexp.QuoteMeta(e.Value))), cannotFollow, e.Value+", an alias of "+b.alias+",", b.alias, e.Value)
			}
			return true
		}
		if !sandboxGlobals[e.Value] {
			l.undefined = append(l.undefined, undefinedRead{e, l.undefinedHint(e)})
		}
		switch e.Value { // KEYS or ARGV used as a whole: any element may be read
		case "KEYS", "ARGV":
			if e.Value == "KEYS" {
				l.keys.dynamic = true
			} else {
				l.argv.dynamic = true
			}
			l.refGlobal(e.Value)
			switch {
			case l.writeUse[e]:
				l.argWrite(e)
			case !l.readUse[e]:
				l.r.errorf(l.loc.find(e.Line(), l.wordRe(e.Value)), "%s is used here as a value (aliased, passed to a function, stored or returned), so what is written through it would change %s[n], which every check reads as what the caller sent; read %s[n], #%s, ipairs(%s) or unpack(%s) directly", e.Value, e.Value, e.Value, e.Value, e.Value, e.Value)
			}
		case "redis":
			l.noteBareRedis(e)
		case "error", "_G", "loadstring", "load":
			l.hiddenRaise(e)
		}
	case *ast.AttrGetExpr:
		if k, ok := e.Key.(*ast.StringExpr); ok && k.Value != "error" && l.isGlobal(e.Object, "_G") {
			switch k.Value {
			case "redis", "KEYS", "ARGV", "_G":
				// Every check reads these by their own names.
				l.r.errorf(l.loc.find(e.Line(), l.wordRe(`_G\s*\.\s*`+k.Value)), "_G.%s reaches %s by a name the analysis does not follow, so the keys, replies and commands it reaches escape every check; write %s", k.Value, k.Value, k.Value)
			case "load", "loadstring":
				l.r.errorf(l.loc.find(e.Line(), l.wordRe(`_G\s*\.\s*`+k.Value)), "_G.%s compiles code no check sees (its redis.call, its keys, its raised errors); drop it", k.Value)
			}
			return false // _G.tostring and the like: a global by its own name
		}
		for _, g := range []struct {
			name string
			u    *usage
			decl []*Param
		}{{"KEYS", &l.keys, l.s.keySlots}, {"ARGV", &l.argv, l.s.argSlots}} {
			if !l.isGlobal(e.Object, g.name) {
				continue
			}
			l.refGlobal(g.name)
			if n, ok := literalIndex(e.Key); ok {
				l.index(g.name, g.u, g.decl, n, e.Line())
			} else {
				g.u.dynamic = true
				l.walk.exprParts(e, e.Object)
			}
			return false
		}
		if l.isGlobal(e.Object, "redis") { // redis.<name>: see noteGlobal
			if k, ok := e.Key.(*ast.StringExpr); ok && (k.Value == "error_reply" || k.Value == "status_reply") && !l.directFn[e] {
				// The reply checks read redis.error_reply("CODE ...") where
				// it is called; through a local (local fail =
				// redis.error_reply) a reserved code such as MOVED escapes.
				l.r.errorf(l.loc.find(e.Line(), reReplyFn[k.Value]), "redis.%s is used here as a value the analysis cannot follow: the reply checks read the replies it makes where it is called (redis.%s(%s)), and one made through this value would escape them; call it directly", k.Value, k.Value, map[bool]string{true: `"CODE message"`, false: `"OK"`}[k.Value == "error_reply"])
			}
			if fn := l.redisFn(e); fn != "" && !l.aliasInit[e] && l.s.Coalesce == 0 { // else checkCoalesce reports it
				// Walked only when not the function of a direct call.
				l.r.errorf(l.loc.find(e.Line(), reRedisValue), cannotFollow, fn, fn, "rcall")
			}
			l.walk.exprParts(e, e.Object)
			return false
		}
	case *ast.ArithmeticOpExpr:
		if (e.Operator == "/" || e.Operator == "%") && len(l.guards) > 0 {
			l.divGuards[e] = l.guardsNow()
		}
	case *ast.FuncCallExpr:
		if a, ok := e.Func.(*ast.AttrGetExpr); ok && l.isGlobal(a.Object, "redis") {
			l.directFn[a] = true
		}
		l.noteMetatables(e)
		re := reRedisCall
		if id, ok := e.Func.(*ast.IdentExpr); ok {
			l.callOf[id] = e
			if b := l.scope.lookup(id.Value); b != nil && b.alias != "" {
				l.resolved[id] = b
				l.ref(b)
				re = l.wordRe(regexp.QuoteMeta(id.Value))
			}
		}
		fn := l.redisCall(e)
		if fn != "" {
			p := l.loc.find(e.Line(), re)
			c := &callSite{call: e, fn: fn, pos: p, guards: l.guardsNow()}
			if p.Line > len(l.loc.lines) {
				// cannot happen: the AST and the locator see the same lines
			} else if m := re.FindStringIndex(l.loc.lines[p.Line-1][p.Col-1:]); m != nil {
				c.args = l.loc.callArgs(l.loc.starts[p.Line-1]+p.Col-1+m[1], len(e.Args))
			}
			l.calls = append(l.calls, c)
		}
		if a, ok := e.Func.(*ast.AttrGetExpr); ok && l.isGlobal(a.Object, "table") && len(e.Args) > 0 && (l.isGlobal(e.Args[0], "KEYS") || l.isGlobal(e.Args[0], "ARGV")) {
			if k, ok := a.Key.(*ast.StringExpr); ok && (k.Value == "insert" || k.Value == "remove" || k.Value == "sort") {
				l.argWrite(e.Args[0].(*ast.IdentExpr))
			}
		}
		raise := l.isGlobal(e.Func, "error")
		if raise {
			l.checkRaise(e)
		}
		if fn != "" || raise { // a direct redis.call or error(...) is checked above
			l.walk.exprParts(e, e.Func)
			return false
		}
	}
	return true
}

// literalIndex returns n for a literal integer index such as KEYS[2].
func literalIndex(e ast.Expr) (int, bool) {
	num, ok := e.(*ast.NumberExpr)
	if !ok {
		return 0, false
	}
	if n, err := strconv.ParseInt(num.Value, 0, 64); err == nil {
		return int(n), true
	}
	if f, err := strconv.ParseFloat(num.Value, 64); err == nil && f == float64(int(f)) {
		return int(f), true
	}
	return 0, false
}

// index records KEYS[n] or ARGV[n] and reports an undeclared one.
func (l *linter) index(name string, u *usage, decl []*Param, n, line int) {
	fixed, variadic := len(decl), false
	if fixed > 0 && decl[fixed-1].Variadic {
		fixed, variadic = fixed-1, true
	}
	re := l.indexRe(name)
	switch {
	case n < 1:
		l.r.errorf(l.loc.findIndex(line, re, n), "%s[%d] is always nil: %s is 1-based", name, n, name)
	case n > fixed && !variadic:
		kind := "key"
		if name == "ARGV" {
			kind = "arg"
		}
		if l.s.mayLack("@" + kind) {
			break // the unknown tag's own error is the one to fix
		}
		l.r.errorf(l.loc.findIndex(line, re, n), "%s[%d] is not declared: the header declares %d %s (add ---@%s lines, or ---@%s ...name for a variable number)",
			name, n, fixed, plural(fixed, kind), kind, kind)
	}
	u.indexes[n] = true
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// checkUnused reports declared keys or args the script never reads.
func (l *linter) checkUnused(kind, name string, decl []*Param, u usage) {
	if u.dynamic || l.s.mayLack("@"+kind) {
		return // a misspelled ---@key or ---@arg shifts the positions after it
	}
	for i, p := range decl {
		if p.Name == "" {
			continue // the line's own error says what is wrong with it
		}
		if p.Variadic {
			used := false
			for n := range u.indexes {
				used = used || n > i
			}
			if !used {
				l.r.errorf(p.Pos, "%s \"...%s\" is declared but the script never reads %s beyond %s[%d] (read them with a loop such as for i = %d, #%s)",
					kind, p.Name, name, name, i, i+1, name)
			}
			continue
		}
		if kept := l.kept(p.Name); kept != nil {
			if u.indexes[i+1] {
				l.r.errorf(kept.Pos, "---@unused %s, but the script reads %s[%d]: drop the ---@unused line", p.Name, name, i+1)
			}
			continue
		}
		if !u.indexes[i+1] {
			l.r.errorf(p.Pos, "%s %q is declared but the script never reads %s[%d]; if callers still pass it, keep it with ---@unused %s reason", kind, p.Name, name, i+1, p.Name)
		}
	}
}

// cannotFollow is the diagnostic for redis.call, redis.pcall or an alias
// of them used as a value: passed to a function, stored, or aliased again.
// Every check (keys, replies, raised errors, write commands) reads the
// calls of them, so a call the analysis cannot see would make each
// silently less.
const cannotFollow = "%s is used here as a value the analysis cannot follow: every check (cluster keys, replies, raised errors, write commands) reads the calls of %s, and a call through this value would escape them; call it directly, or through a local assigned once where it is declared (local %s = redis.call)"

// kept returns the ---@unused line naming a declared key or arg, and
// marks it as naming one.
func (l *linter) kept(name string) *Unused {
	for _, u := range l.s.Unused {
		if u.Name == name {
			u.used = true
			return u
		}
	}
	return nil
}

// checkKept reports ---@unused lines that name no declared key or arg, or
// a name that is both.
func (l *linter) checkKept() {
	for _, u := range l.s.Unused {
		key := slices.ContainsFunc(l.s.Keys, func(p *Param) bool { return p.Name == u.Name })
		arg := slices.ContainsFunc(l.s.Args, func(p *Param) bool { return p.Name == u.Name })
		switch {
		case key && arg:
			l.r.errorf(u.Pos, "---@unused %s: both a key and an arg are named %s; rename one", u.Name, u.Name)
		case !u.used && !key && !arg && !l.s.mayLack("@key") && !l.s.mayLack("@arg"):
			l.r.errorf(u.Pos, "---@unused %s names no declared key or arg (not variadic): declare it with ---@key or ---@arg first", u.Name)
		}
	}
}

// redisCall returns "redis.call" or "redis.pcall" when e calls one of
// them, directly or through an alias (local rcall = redis.call; see
// binding.alias).
func (l *linter) redisCall(e *ast.FuncCallExpr) string {
	if id, ok := e.Func.(*ast.IdentExpr); ok {
		if b := l.resolved[id]; b != nil {
			return b.alias
		}
		return ""
	}
	return l.redisFn(e.Func)
}

// redisFn returns "redis.call" or "redis.pcall" when e is that field of the
// global redis.
func (l *linter) redisFn(e ast.Expr) string {
	a, ok := e.(*ast.AttrGetExpr)
	if !ok || !l.isGlobal(a.Object, "redis") {
		return ""
	}
	if k, ok := a.Key.(*ast.StringExpr); ok && (k.Value == "call" || k.Value == "pcall") {
		return "redis." + k.Value
	}
	return ""
}

// multi reports whether e expands to several values as the last
// expression of a list: a call or "...".
// singleValue reports a call of a global Lua function that returns exactly
// one value (tonumber, tostring), so a local assigned from it holds that
// value and the reply checks can follow it (local n = tonumber(ARGV[1])).
func (l *linter) singleValue(e ast.Expr) bool {
	c, ok := e.(*ast.FuncCallExpr)
	return ok && (l.isGlobal(c.Func, "tonumber") || l.isGlobal(c.Func, "tostring"))
}

func multi(e ast.Expr) bool {
	switch e.(type) {
	case *ast.FuncCallExpr, *ast.Comma3Expr:
		return true
	}
	return false
}

// --- origins ---

// untraced lists what the cluster lint cannot trace to a key family.
const untraced = "a table field such as a decoded argument's, a function's result, or a parameter of a function that is not a local only called directly"

func (l *linter) taintOf(e ast.Expr) taint {
	switch e := e.(type) {
	case *ast.NilExpr, *ast.FalseExpr:
		// No key: a command given nil or false fails whatever the slot, so
		// it adds no origin (removeJob(id, nil) passes no parent key).
		return taint{origin: fromTagged}
	case *ast.StringExpr:
		return taint{origin: fromLiteral, why: fmt.Sprintf("is the literal %q", e.Value)}
	case *ast.NumberExpr:
		return taint{origin: fromLiteral, why: "is the literal " + e.Value}
	case *ast.StringConcatOpExpr:
		left := e.Lhs
		for {
			c, ok := left.(*ast.StringConcatOpExpr)
			if !ok {
				break
			}
			left = c.Lhs
		}
		base := l.taintOf(left)
		switch {
		case base.origin == fromTagged:
			return taint{origin: fromTagged} // appended to a family's prefix: the same hash tag
		case base.origin == fromLiteral:
			return taint{origin: fromBuilt, why: "is built in Lua (string concatenation) starting with a literal, which carries no family's hash tag"}
		case base.why != "":
			return taint{origin: fromBuilt, why: "is built in Lua (string concatenation) from a value that " + base.String()}
		case base.origin == fromKeys:
			return taint{origin: fromBuilt, why: "is built in Lua (string concatenation) from a key laid out in no ---@keys family, whose hash tag nothing guarantees"}
		case base.origin == fromUnknown:
			return taint{origin: fromBuilt, why: "is built in Lua (string concatenation) from a value the analysis cannot trace to a key family (" + untraced + ")"}
		}
		return taint{origin: fromBuilt, why: "is built in Lua (string concatenation)"}
	case *ast.AttrGetExpr:
		if l.isGlobal(e.Object, "KEYS") {
			if n, ok := literalIndex(e.Key); ok && l.tagged(l.s.keySlots, n) {
				return taint{origin: fromTagged}
			}
			return taint{origin: fromKeys, why: ""}
		}
		if id, ok := e.Object.(*ast.IdentExpr); ok {
			if b := l.resolved[id]; b != nil && b.decoded != "" && len(b.values) == 0 {
				n, lit := literalIndex(e.Key)
				switch {
				case b.decodedChanged:
					return taint{origin: fromArgv, why: fmt.Sprintf("comes from the decoded arg %s, which the script changes or passes on (%s[i] = x, table.insert, local t = %s, f(%s)), so no ---@elem says what it holds", b.decoded, b.name, b.name, b.name)}
				case lit && l.elemTagged(b.decoded, n):
					return taint{origin: fromTagged}
				case lit:
					return taint{origin: fromArgv, why: fmt.Sprintf("comes from element %d of the decoded arg %s, which no ---@elem lays out in a key family (---@elem %s[%d] name {tag}suffix)", n, b.decoded, b.decoded, n)}
				default:
					return taint{origin: fromArgv, why: "comes from an element of the decoded arg " + b.decoded}
				}
			} else if b != nil {
				// An element of a reply (HMGET's, LRANGE's) is data.
				if t := l.bindingTaint(b); t.origin == fromBuilt && strings.Contains(t.why, " reply") {
					return taint{origin: fromBuilt, why: elementOf(t.why), via: b.name}
				}
			}
		} else if !l.isGlobal(e.Object, "KEYS") && !l.isGlobal(e.Object, "ARGV") {
			// r[1][2], (rcall('LRANGE', ...))[1]: an element of an
			// element of a reply, or of a call's reply, is data too.
			if t := l.taintOf(e.Object); t.origin == fromBuilt && strings.Contains(t.why, " reply") {
				return taint{origin: fromBuilt, why: elementOf(t.why), via: t.via}
			}
		}
		if l.isGlobal(e.Object, "ARGV") {
			if n, ok := literalIndex(e.Key); ok && l.tagged(l.s.argSlots, n) {
				return taint{origin: fromTagged}
			}
			if n, ok := literalIndex(e.Key); ok {
				return taint{origin: fromArgv, why: fmt.Sprintf("comes from ARGV[%d]", n)}
			}
			return taint{origin: fromArgv, why: "comes from ARGV"}
		}
	case *ast.IdentExpr:
		if b := l.resolved[e]; b != nil {
			t := l.bindingTaint(b)
			if t.via == "" {
				t.via = b.name
			}
			return t
		}
	case *ast.LogicalOpExpr:
		return join(l.taintOf(e.Lhs), l.taintOf(e.Rhs))
	case *ast.FuncCallExpr:
		if fn := l.redisCall(e); fn != "" {
			return taint{origin: fromBuilt, why: "comes from a " + fn + " reply"}
		}
		if e.Receiver != nil {
			return taint{origin: fromBuilt, why: "is built in Lua (string method :" + e.Method + ")"}
		}
		if a, ok := e.Func.(*ast.AttrGetExpr); ok {
			if k, ok := a.Key.(*ast.StringExpr); ok && (l.isGlobal(a.Object, "string") || l.isGlobal(a.Object, "table") && k.Value == "concat") {
				g := a.Object.(*ast.IdentExpr).Value
				return taint{origin: fromBuilt, why: "is built in Lua (" + g + "." + k.Value + ")"}
			}
		}
		if (l.isGlobal(e.Func, "tostring") || l.isGlobal(e.Func, "assert")) && len(e.Args) >= 1 {
			return l.taintOf(e.Args[0]) // both give their first argument back
		}
		if len(e.Args) >= 1 && (l.isGlobal(e.Func, "rawget") || l.isGlobal(e.Func, "next") || l.isTableFn(e, "remove")) {
			return l.tableElems(e.Args[0]) // an element of the table
		}
		if l.isGlobal(e.Func, "select") && len(e.Args) >= 2 {
			t := taint{origin: fromTagged}
			for _, a := range e.Args[1:] {
				t = join(t, l.taintOf(a))
			}
			return t
		}
		if l.isUnpack(e) {
			return l.elemTaint(e)
		}
	}
	return taint{origin: fromUnknown, why: ""}
}

// localFunc returns the function a local holds when it holds only that
// one (local function f, local f = function, or local f declared bare and
// assigned a function once, as a recursive pair of helpers is), else nil.
func localFunc(b *binding) *ast.FunctionExpr {
	if b.fixed != nil && !b.bare || len(b.values) != 1 {
		return nil
	}
	fe, _ := b.values[0].(*ast.FunctionExpr)
	return fe
}

// paramTaint is the origin of parameter b: the worst of what the calls of
// its function pass there, so that a helper's prefix .. id is a key built
// from the script's prefix (BullMQ passes its queue's prefix to every
// helper). It is unknown when the function is not a local, is used other
// than by calling it, or is never called.
func (l *linter) paramTaint(b *binding) taint {
	owner, calls, ok := l.liveCalls(b)
	if !ok {
		return taint{origin: fromUnknown, why: ""}
	}
	// A function never called (a helper an include brings in for another
	// one) runs no command, so its parameters add nothing.
	t := taint{origin: fromTagged}
	for _, rec := range calls {
		c := rec.call
		n := len(c.Args)
		var at taint
		switch {
		case n > 0 && b.index >= n-1 && multi(c.Args[n-1]):
			at = l.elemTaint(c.Args[n-1])
		case b.index < n:
			at = l.taintAt(c.Args[b.index], rec.guards)
		default:
			continue
		}
		if at.origin == fromUnknown && at.why == "" {
			// Say which call passes it, or the helper's line alone does
			// not say where the value comes from (a child job's key read
			// from the server, passed back into the same helper).
			at.why = "cannot be traced to a key family (" + untraced + ")"
		}
		if at.origin > t.origin && at.why != "" {
			// Name the call that passes it: the helper's line alone does
			// not say which of its callers to fix.
			path, line := l.s.Position(c.Line())
			at.why = fmt.Sprintf("%s, passed to %s by the call at %s:%d", at.String(), owner.name, path, line)
			at.via = b.name
		}
		t = join(t, at)
	}
	return t
}

// decodedArg returns the name of the declared arg that e decodes
// (cmsgpack.unpack(ARGV[n]) or cjson.decode(ARGV[n]), n a literal), or "".
func (l *linter) decodedArg(e ast.Expr) string {
	c, ok := e.(*ast.FuncCallExpr)
	if !ok || len(c.Args) != 1 {
		return ""
	}
	a, ok := c.Func.(*ast.AttrGetExpr)
	if !ok {
		return ""
	}
	k, ok := a.Key.(*ast.StringExpr)
	if !ok || !(l.isGlobal(a.Object, "cmsgpack") && k.Value == "unpack" || l.isGlobal(a.Object, "cjson") && k.Value == "decode") {
		return ""
	}
	arg, ok := c.Args[0].(*ast.AttrGetExpr)
	if !ok || !l.isGlobal(arg.Object, "ARGV") {
		return ""
	}
	n, ok := literalIndex(arg.Key)
	if !ok || n < 1 || n > len(l.s.argSlots) {
		return ""
	}
	return l.s.argSlots[n-1].Name
}

// elemTagged reports whether element n of the decoded arg is laid out in a
// key family (---@elem arg[n] name {tag}suffix).
func (l *linter) elemTagged(arg string, n int) bool {
	for _, e := range l.s.Elems {
		if e.Arg == arg && e.Index == n {
			return true
		}
	}
	return false
}

// paramArgs is what the calls of parameter b's function pass there (a
// nil literal where a call passes fewer), for the reply analysis; ok is
// false when the function is not a local the script only calls, or when
// a call's last argument expands to values the analysis cannot count.
func (l *linter) paramArgs(b *binding) (args []ast.Expr, ok bool) {
	owner, calls, ok := l.liveCalls(b)
	if !ok || len(l.fnCalls[owner]) == 0 {
		return nil, false
	}
	for _, rec := range calls {
		c := rec.call
		n := len(c.Args)
		switch {
		case n > 0 && b.index > n-1 && multi(c.Args[n-1]):
			return nil, false
		case b.index < n:
			args = append(args, c.Args[b.index])
		default:
			args = append(args, &ast.NilExpr{})
		}
	}
	return args, true
}

// tagged reports whether the n-th declared key or arg (KEYS[n], ARGV[n])
// is laid out in a key family, so that it carries the family's hash tag.
func (l *linter) tagged(slots []*Param, n int) bool {
	return n >= 1 && n <= len(slots) && !slots[n-1].Variadic && slots[n-1].Template != nil
}

func (l *linter) isUnpack(e *ast.FuncCallExpr) bool {
	if len(e.Args) == 0 {
		return false
	}
	if l.isGlobal(e.Func, "unpack") {
		return true
	}
	a, ok := e.Func.(*ast.AttrGetExpr)
	if !ok || !l.isGlobal(a.Object, "table") {
		return false
	}
	k, ok := a.Key.(*ast.StringExpr)
	return ok && k.Value == "unpack"
}

// elemTaint is the origin of the values a multi-value expression expands
// to: unpack(KEYS) gives keys, unpack(ARGV) args.
func (l *linter) elemTaint(e ast.Expr) taint {
	if c, ok := e.(*ast.FuncCallExpr); ok {
		if l.isUnpack(c) {
			t := l.tableElems(c.Args[0])
			if t.origin == fromArgv {
				t.why = "comes from ARGV (unpack(ARGV))"
			}
			return t
		}
		return l.taintOf(c)
	}
	return taint{origin: fromUnknown, why: ""}
}

// tableElems is the origin of the elements of a table expression: KEYS'
// are keys, ARGV's the caller's args, a reply's (directly or through a
// local) data.
func (l *linter) tableElems(e ast.Expr) taint {
	switch {
	case l.isGlobal(e, "KEYS"):
		return taint{origin: fromKeys, why: ""}
	case l.isGlobal(e, "ARGV"):
		return taint{origin: fromArgv, why: "comes from ARGV"}
	}
	if te, ok := e.(*ast.TableExpr); ok {
		// next({moved}), unpack({a, b}): the constructor's values.
		t := taint{origin: fromTagged}
		for _, f := range te.Fields {
			t = join(t, l.taintOf(f.Value))
		}
		return t
	}
	if t := l.taintOf(e); t.origin == fromBuilt && strings.Contains(t.why, " reply") {
		return taint{origin: fromBuilt, why: elementOf(t.why), via: t.via}
	}
	return taint{origin: fromUnknown, why: ""}
}

func (l *linter) bindingTaint(b *binding) taint {
	if b.memo != nil {
		return *b.memo
	}
	if b.busy {
		return taint{origin: fromTagged} // a cycle adds nothing new
	}
	b.busy = true
	t := taint{origin: fromTagged}
	if b.fixed != nil {
		t = *b.fixed
	} else if b.param != nil {
		t = l.paramTaint(b)
	} else if len(b.values) == 0 {
		t = taint{origin: fromUnknown, why: ""}
	}
	for _, v := range b.values {
		t = join(t, l.taintAt(v, b.guards))
	}
	b.busy = false
	b.memo = &t
	return t
}

// --- commands ---

// commandOf returns the lower-case command name of a call and its entry in
// the command table of internal/commands (descending into a subcommand such
// as OBJECT ENCODING).
func commandOf(args []ast.Expr) (string, *rediscmd.Info, bool) {
	if len(args) == 0 {
		return "", nil, false
	}
	lit, ok := args[0].(*ast.StringExpr)
	if !ok {
		return "", nil, false
	}
	name := strings.ToLower(lit.Value)
	info, known := rediscmd.Lookup(name)
	if known && info.Subcommands && len(args) > 1 {
		if sub, ok := args[1].(*ast.StringExpr); ok {
			if si, ok := rediscmd.Lookup(name + "|" + sub.Value); ok {
				return name + " " + strings.ToLower(sub.Value), si, true
			}
		}
	}
	return name, info, known
}

// checkCommand reports calls Redis refuses whatever the keys are.
func (l *linter) checkCommand(c *callSite) {
	name, info, known := commandOf(c.call.Args)
	if !known {
		return
	}
	at := c.argPos(0)
	cmd := strings.ToUpper(name)
	if info.Has(rediscmd.NoScript) {
		l.r.errorf(at, "%s cannot be called from a script: Redis answers \"This Redis command is not allowed from script\"", cmd)
	}
	if info.Has(rediscmd.Write) && l.s.ReadOnly {
		l.r.errorf(at, "%s writes, but the shebang declares flags=no-writes: Redis answers \"Write commands are not allowed from read-only scripts\"", cmd)
	}
}

// checkCall runs checkCommand and the cluster-safety lint on one call.
func (l *linter) checkCall(c *callSite) {
	l.checkCommand(c)
	args := c.call.Args
	name, info, known := commandOf(args)
	if name == "" {
		return // the command is not a literal: nothing to go on
	}
	var idx []int
	if known {
		idx = keyIndexes(info, args)
	} else if len(args) > 1 {
		idx = []int{1} // unknown command: assume only the first argument is a key
	}
	cmd := strings.ToUpper(name)
	last := len(args) - 1
	expands := multi(args[last])
	for _, i := range idx {
		var t taint
		switch {
		case i < last || i == last && !expands:
			t = l.taintAt(args[i], c.guards)
		case expands:
			t = l.elemTaint(args[last])
			i = last
		default:
			continue
		}
		if t.origin < fromLiteral || (t.origin == fromLiteral && !known) {
			continue
		}
		at := c.argPos(i)
		fix := "pass every key in KEYS"
		if strings.HasPrefix(t.why, "is built in Lua (string concatenation)") || t.origin == fromArgv {
			// The key a script builds from a prefix is the common case.
			fix = "pass every key in KEYS, or build it by appending to a key or an arg laid out in a ---@keys family (---@key name {tag}:suffix, ---@arg prefix {tag}:), which carries the family's hash tag"
		}
		l.r.errorf(at, "cluster-unsafe key: the %s key %s; Redis Cluster routes a script by its KEYS, so %s (or opt out with ---@unsafe-keys reason)", cmd, t, fix)
		if expands && i == last {
			break
		}
	}
}

// keyIndexes returns which arguments of a call are keys (1 is the first
// argument after the command name), following the command's key specs
// (https://redis.io/docs/latest/develop/reference/key-specs/). When the
// last argument expands to several values (unpack(...)), positions past it
// are clamped to it. Specs that need a non-literal argument to resolve
// (a keyword search over variables, a numkeys that is not a literal) keep
// only what is certain.
func keyIndexes(info *rediscmd.Info, args []ast.Expr) []int {
	n := len(args) // argv length when nothing expands; also the clamp limit
	out := info.KeyIndexes(n,
		func(i int, keyword string) bool { return isWord(args[i], keyword) },
		func(k int) int { // a count that is not a literal: only the first key is certain
			if k < n {
				if v, ok := literalIndex(args[k]); ok {
					return v
				}
			}
			return 1
		})
	slices.Sort(out)
	return slices.Compact(out)
}

func isWord(e ast.Expr, w string) bool {
	s, ok := e.(*ast.StringExpr)
	return ok && strings.EqualFold(s.Value, w)
}

// hiddenRaise reports a use of error other than a direct call, and of _G
// (but for _G.name with a literal name other than error) and loadstring:
// each can raise a text checkRaise never sees (local raise = error;
// raise(ARGV[1], 0), pcall(error, ...), _G['error'], code compiled at run
// time), and a raised text's first word reaches clients unchecked.
// (assert needs no check: Lua puts the caller's "user_script:N: " in front
// of its message.)
func (l *linter) hiddenRaise(id *ast.IdentExpr) {
	at := l.loc.find(id.Line(), l.wordRe(regexp.QuoteMeta(id.Value)))
	what := id.Value + " is used here other than as error(...)"
	switch id.Value {
	case "_G":
		what = "_G reaches globals by a name this check cannot follow (_G['error'] is error)"
	case "loadstring", "load":
		what = id.Value + " compiles code this check never sees"
	}
	l.r.errorf(at, "%s: a script could raise a text of its caller's choosing that way, and Redis sends a raised error's first word to clients unchecked (a MOVED makes a cluster client send the script again, a NOSCRIPT makes the runtime send it again); call error(...) directly, or return redis.error_reply(...)", what)
}

// checkRaise reports an error(...) whose text a caller may choose. A raised
// error does not pass the wrapped body's check (runtime/wire.go): Redis
// sends its text with " script: <sha1>, on @user_script:N." after it, and
// clients still read its first word as the server's code (rueidis takes a
// MOVED's third word for the node to send the script to again). Safe are a
// string raised at level 1 (Lua puts "user_script:N: " in front) and a
// literal text whose code is not reserved.
func (l *linter) checkRaise(e *ast.FuncCallExpr) {
	if len(e.Args) == 0 {
		return
	}
	var text ast.Expr
	switch a := e.Args[0].(type) {
	case *ast.StringExpr, *ast.NumberExpr, *ast.StringConcatOpExpr:
		if len(e.Args) == 1 {
			return // Lua prefixes the position: "user_script:N: ..."
		}
		text = a
	case *ast.AttrGetExpr:
		if len(e.Args) == 1 && (l.isGlobal(a.Object, "ARGV") || l.isGlobal(a.Object, "KEYS")) {
			return // a string, so Lua prefixes the position
		}
	case *ast.TableExpr:
		for _, f := range a.Fields {
			if k, ok := f.Key.(*ast.StringExpr); ok && k.Value == "err" {
				text = f.Value
			}
		}
		if text == nil {
			return // no err field: Redis sends "ERR unknown error"
		}
	}
	p := l.loc.find(e.Line(), reErrorCall)
	if _, ok := e.Args[0].(*ast.TableExpr); ok {
		if _, ok := text.(*ast.StringExpr); ok {
			return // the reply checks report a reserved code in {err = '...'}
		}
	}
	if lit, ok := text.(*ast.StringExpr); ok {
		code, _, _ := strings.Cut(strings.TrimPrefix(lit.Value, "ERR "), " ")
		if why, ok := reservedCodes[code]; ok {
			l.r.errorf(p, "this raised error starts with %s, a code Redis itself replies with, and %s: choose a code of your own, e.g. SCRIPT_%s", code, why, code)
		}
		return
	}
	l.r.errorf(p, "error(...) raises a text that is not a literal: Redis sends a raised error's first word as its code, unchecked, and a client reads MOVED, ASK, TRYAGAIN and the like there as the server's own (a MOVED makes a cluster client send the script again); return redis.error_reply(...) instead, whose reply the runtime marks, or raise a literal text")
}

// literalValue returns the value of a number literal, or of one negated.
func literalValue(x ast.Expr) (float64, bool) {
	neg := false
	if u, ok := x.(*ast.UnaryMinusOpExpr); ok {
		x, neg = u.Expr, true
	}
	n, ok := x.(*ast.NumberExpr)
	if !ok {
		return 0, false
	}
	f, ok := luaNumber(n.Value)
	if neg {
		f = -f
	}
	return f, ok
}

// callRe finds the function of a redis.call (or of an alias's call) for
// the number checks, with patterns of their own so that the locator
// counts their lookups apart from the cluster lint's (see locator.find).
func (l *linter) callRe(e *ast.FuncCallExpr) *regexp.Regexp {
	name := `redis\s*\.\s*p?call`
	if id, ok := e.Func.(*ast.IdentExpr); ok {
		name = regexp.QuoteMeta(id.Value)
	}
	key := "\x00arg " + name
	if re := l.regexps[key]; re != nil {
		return re
	}
	re := regexp.MustCompile(`(\b` + name + `)\s*\(`)
	l.regexps[key] = re
	return re
}

// globalAlias returns what a local assigned once from a global or from a
// field of one holds (local tn = tonumber gives tonumber, local floor =
// math.floor gives math.floor), or nil.
func (l *linter) globalAlias(b *binding) ast.Expr {
	if !l.once(b) || b.init == nil {
		return nil
	}
	switch x := b.init.(type) {
	case *ast.IdentExpr:
		if l.resolved[x] == nil {
			return x
		}
	case *ast.AttrGetExpr:
		if _, ok := x.Key.(*ast.StringExpr); ok {
			if o, ok := x.Object.(*ast.IdentExpr); ok && l.resolved[o] == nil {
				return x
			}
		}
	}
	return nil
}

// readFns are the global functions that only read the table they are
// given first; writeFns those that change it.
var (
	readFns  = map[string]bool{"ipairs": true, "pairs": true, "unpack": true, "next": true, "table.unpack": true, "table.concat": true, "table.getn": true, "table.maxn": true, "rawget": true, "rawlen": true, "rawequal": true, "type": true, "tostring": true}
	writeFns = map[string]bool{"table.insert": true, "table.remove": true, "table.sort": true, "table.setn": true, "rawset": true, "setmetatable": true}
)

// markTableUse marks the names e reads or writes as a table, before the
// walk reaches them (see readUse): T[i] and #T read T, and so does a call
// of ipairs, unpack or another of readFns given T first; T[i] = x and
// writeFns given T first write it. A name of KEYS, ARGV or a decoded arg
// met otherwise is used as a value.
func (l *linter) markTableUse(e ast.Expr) {
	switch e := e.(type) {
	case *ast.AttrGetExpr:
		if id, ok := e.Object.(*ast.IdentExpr); ok {
			if l.writeTarget[e] {
				l.writeUse[id] = true
			} else {
				l.readUse[id] = true
			}
		}
	case *ast.UnaryLenOpExpr:
		if id, ok := e.Expr.(*ast.IdentExpr); ok {
			l.readUse[id] = true
		}
	case *ast.FuncCallExpr:
		if len(e.Args) == 0 || e.Receiver != nil {
			return
		}
		id, ok := e.Args[0].(*ast.IdentExpr)
		if !ok {
			return
		}
		name := ""
		switch f := e.Func.(type) {
		case *ast.IdentExpr:
			if l.scope.lookup(f.Value) == nil {
				name = f.Value
			}
		case *ast.AttrGetExpr:
			if o, ok := f.Object.(*ast.IdentExpr); ok && l.scope.lookup(o.Value) == nil {
				if k, ok := f.Key.(*ast.StringExpr); ok {
					name = o.Value + "." + k.Value
				}
			}
		}
		switch {
		case (name == "ipairs" || name == "pairs" || name == "next") && !l.forIn[e]:
			// local it, t = ipairs(ARGV) hands ARGV itself back: only a
			// for ... in ipairs(ARGV) reads it.
		case readFns[name]:
			l.readUse[id] = true
		case writeFns[name]:
			l.writeUse[id] = true
		}
	}
}

// noteMetatables records a script that sets metatables: a table can then
// answer s:sub() and s .. x as the script likes, so no guard proves what
// a value begins with (narrow.go).
func (l *linter) noteMetatables(e *ast.FuncCallExpr) {
	switch f := e.Func.(type) {
	case *ast.IdentExpr:
		if f.Value == "setmetatable" && l.scope.lookup(f.Value) == nil {
			l.metatables = true
		}
	case *ast.AttrGetExpr:
		if l.isGlobal(f.Object, "debug") {
			l.metatables = true
		}
	}
}

// elementOf is the why of an element of a value whose why is why ("comes
// from a GET reply" gives "comes from an element of a GET reply").
func elementOf(why string) string {
	if strings.HasPrefix(why, "comes from an element of ") {
		return why
	}
	return "comes from an element of " + strings.TrimPrefix(why, "comes from ")
}

// isLoop reports a block that may run more than once.
func isLoop(owner ast.PositionHolder) bool {
	switch owner.(type) {
	case *ast.WhileStmt, *ast.RepeatStmt, *ast.NumberForStmt, *ast.GenericForStmt:
		return true
	}
	return false
}

// stringValue returns the text of a string literal, or of a local
// assigned once from one (local fmt = '%d').
func (l *linter) stringValue(e ast.Expr) (string, bool) {
	if id, ok := e.(*ast.IdentExpr); ok {
		if b := l.resolved[id]; b != nil && l.once(b) {
			e = b.init
		}
	}
	s, ok := e.(*ast.StringExpr)
	if !ok {
		return "", false
	}
	return s.Value, true
}

// isTableFn reports a call of table.<name>.
func (l *linter) isTableFn(e *ast.FuncCallExpr, name string) bool {
	a, ok := e.Func.(*ast.AttrGetExpr)
	return ok && l.isGlobal(a.Object, "table") && isWord(a.Key, name)
}
