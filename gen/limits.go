package gen

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/yuin/gopher-lua/ast"
)

// Lua 5.1's compile limits (luaconf.h), which Redis 7.0 keeps: a function
// has at most luaMaxVars local variables in scope at once (LUAI_MAXVARS:
// parameters, the 3 hidden control variables of every for loop and, in a
// function declared with "...", the hidden local arg of LUA_COMPAT_VARARG
// count too) and at most luaMaxUpvalues upvalues (LUAI_MAXUPVALUES: each
// local of an enclosing function that it or a function nested in it uses,
// counted once). Checked against redis-server 7.0.15.
const (
	luaMaxVars     = 200
	luaMaxUpvalues = 60
)

// fnState is what the linter counts of one Lua function (the script's
// main chunk is the root) for the compile limits.
type fnState struct {
	parent *fnState
	expr   *ast.FunctionExpr // nil for the main chunk
	line   int
	active int // locals in scope now
	max    int // the most locals in scope at once
	maxAt  int // line of the declaration that first reached max
	upvals map[*binding]bool
	kv     map[string]bool // the globals KEYS and ARGV it or a nested function reads

	// outerLine is the linter's line where the function began, which it
	// is again once the function ends.
	outerLine int
}

// enter starts counting a function declared at line.
func (l *linter) enter(line int) {
	l.fn = &fnState{parent: l.fn, line: line, upvals: map[*binding]bool{}, kv: map[string]bool{}}
	l.fns = append(l.fns, l.fn)
}

// addLocals counts n more locals in the current scope of the current
// function, declared at line.
func (l *linter) addLocals(n, line int) {
	l.scope.n += n
	f := l.fn
	f.active += n
	if f.active > f.max {
		f.max, f.maxAt = f.active, line
	}
}

// ref records that the current function uses the local b.
func (l *linter) ref(b *binding) {
	for f := l.fn; f != nil && f != b.fn; f = f.parent {
		f.upvals[b] = true
	}
}

// refGlobal records that the current function reads the global KEYS or
// ARGV, which the wrappers of a merged run and of function mode turn into
// locals of an enclosing function.
func (l *linter) refGlobal(name string) {
	for f := l.fn; f != nil; f = f.parent {
		f.kv[name] = true
	}
}

var reDecl = regexp.MustCompile(`\b(?:local|for|function)\b`)

// checkLimits reports functions that exceed Lua's compile limits as the
// script runs: wrapped for EVAL (runtime/wire.go: the body becomes
// function(...) when its text contains "..."), and under ---@coalesce in the
// companion (runtime/coalesce_wire.go: local f = function(KEYS, ARGV[, ...])).
// What only function mode would exceed (runtime/library.go:
// callback=function(KEYS, ARGV) ... (function([...]) body end)()) goes to
// s.functionLimits, which Generate reports with Config.Functions.
func (l *linter) checkLimits() {
	s := l.s
	code := s.Body
	if strings.HasPrefix(code, "#!") {
		_, code, _ = strings.Cut(code, "\n")
	}
	vararg := 0
	argNote := ""
	if strings.Contains(code, "...") {
		vararg = 1
		argNote = `, and one more, arg, of the function(...) the runtime wraps the body in because its text contains "..."`
	}
	for i, f := range l.fns {
		if i == 0 {
			n := f.max + vararg
			at := func() Pos { return l.loc.find(f.maxAt, reDecl) }
			switch {
			case n > luaMaxVars:
				l.r.errorf(at(), limitPrefix+"%d local variables are in scope here (each for loop counts 3 hidden ones%s) and Lua 5.1 allows %d per function (LUAI_MAXVARS)", n, argNote, luaMaxVars)
			case s.Coalesce > 0 && n+2 > luaMaxVars:
				l.r.errorf(at(), "---@coalesce cannot merge this script: %d local variables are in scope here (each for loop counts 3 hidden ones%s), and the companion makes the body a function of KEYS and ARGV, 2 more, beyond the %d Lua 5.1 allows per function (LUAI_MAXVARS): every merged call would fail to compile", n, argNote, luaMaxVars)
			}
			continue
		}
		at := func() Pos { return l.loc.find(f.line, l.wordRe("function")) }
		if f.max > luaMaxVars {
			l.r.errorf(l.loc.find(f.maxAt, reDecl), limitPrefix+"%d local variables are in scope here in one function (each for loop counts 3 hidden ones) and Lua 5.1 allows %d per function (LUAI_MAXVARS)", f.max, luaMaxVars)
		}
		up, kv := len(f.upvals), len(f.kv)
		names := kvNames(f.kv)
		switch {
		case up > luaMaxUpvalues:
			l.r.errorf(at(), limitPrefix+"this function uses %d locals of enclosing functions (upvalues, counting those of the functions nested in it) and Lua 5.1 allows %d per function (LUAI_MAXUPVALUES)", up, luaMaxUpvalues)
		case up+kv > luaMaxUpvalues && s.Coalesce > 0:
			l.r.errorf(at(), "---@coalesce cannot merge this script: this function uses %d locals of enclosing functions (upvalues, counting those of the functions nested in it), and %s of the body's function in the companion, make %d, more than the %d Lua 5.1 allows per function (LUAI_MAXUPVALUES): every merged call would fail to compile", up, names, up+kv, luaMaxUpvalues)
		case up+kv > luaMaxUpvalues:
			s.functionLimits = append(s.functionLimits, Diagnostic{Path: s.Path, Pos: at(), Msg: fmt.Sprintf("function mode (-functions) cannot register this script: this function uses %d locals of enclosing functions (upvalues, counting those of the functions nested in it), and %s of the registered callback, make %d, more than the %d Lua 5.1 allows per function (LUAI_MAXUPVALUES): FUNCTION LOAD would refuse the whole library", up, names, up+kv, luaMaxUpvalues)})
		}
	}
}

// kvNames is "KEYS, a parameter", "ARGV, a parameter" or "KEYS and
// ARGV, parameters".
func kvNames(kv map[string]bool) string {
	switch {
	case kv["KEYS"] && kv["ARGV"]:
		return "KEYS and ARGV, parameters"
	case kv["KEYS"]:
		return "KEYS, a parameter"
	}
	return "ARGV, a parameter"
}
