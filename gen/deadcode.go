package gen

import "github.com/yuin/gopher-lua/ast"

// Branches a helper's callers never take. BullMQ's helpers serve several
// scripts, and a script passes constants that switch parts of a helper
// off (removeParentDependencyKey(jobKey, false, nil, ...): no parent, not
// hard); the keys those parts build would otherwise count against every
// script that includes the helper. A branch is dead when its condition is
// a parameter of a local function that every live call passes nil or
// false (or nothing) for, directly or through a parameter that is itself
// always so; calls and redis.call sites in dead branches add nothing to
// the cluster lint.

// guard is one condition a statement runs under: an if's condition, true
// in its then-block, false in its else-block.
type guard struct {
	cond ast.Expr
	then bool
}

// callRec is a direct call of a local function with the guards it runs
// under.
type callRec struct {
	call   *ast.FuncCallExpr
	guards []guard
}

// openIf and closeIf keep l.guards as the walk enters and leaves an if's
// blocks (the walk opens the then-block first, then the else-block).
func (l *linter) openIf(st *ast.IfStmt) {
	then := !l.ifSeen[st]
	l.ifSeen[st] = true
	if then {
		l.noteZeroGuard(st)
	}
	l.guards = append(l.guards, guard{cond: st.Condition, then: then})
}

func (l *linter) closeIf() { l.guards = l.guards[:len(l.guards)-1] }

// guardsNow is a copy of the guards the walk is under.
func (l *linter) guardsNow() []guard {
	if len(l.guards) == 0 {
		return nil
	}
	return append([]guard(nil), l.guards...)
}

// dead reports whether code under guards never runs.
func (l *linter) dead(guards []guard) bool {
	for _, g := range guards {
		if g.then && l.alwaysFalsy(g.cond) {
			return true
		}
	}
	return false
}

// alwaysFalsy reports whether e is nil or false whenever it is evaluated:
// a nil or false literal, a and-expression with such an operand, or a
// parameter, never assigned, of a local function whose every live call
// passes such a value there (or no value).
func (l *linter) alwaysFalsy(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.NilExpr, *ast.FalseExpr:
		return true
	case *ast.LogicalOpExpr:
		return e.Operator == "and" && (l.alwaysFalsy(e.Lhs) || l.alwaysFalsy(e.Rhs))
	case *ast.IdentExpr:
		b := l.resolved[e]
		if b == nil || b.param == nil || len(b.values) > 0 {
			return false
		}
		if v, ok := l.falsy[b]; ok {
			return v
		}
		l.falsy[b] = true // a call of the function from itself passes what it got
		v := l.paramFalsy(b)
		l.falsy[b] = v
		return v
	}
	return false
}

// liveCalls returns the local function whose parameter b is and its calls,
// less those in branches no call takes; ok is false when the function is
// not a local the script only calls directly (then what its parameters
// hold is not known). It is the one reading of a parameter's callers that
// the cluster lint (paramTaint), the reply analysis (paramArgs) and the
// dead-branch test (paramFalsy) share.
func (l *linter) liveCalls(b *binding) (owner *binding, calls []callRec, ok bool) {
	owner = l.owner[b.param]
	if owner == nil || localFunc(owner) != b.param || l.escaped[owner] {
		return nil, nil, false
	}
	for _, c := range l.fnCalls[owner] {
		if !l.dead(c.guards) {
			calls = append(calls, c)
		}
	}
	return owner, calls, true
}

// paramFalsy is alwaysFalsy for parameter b: every live call of its
// function passes nil, false or nothing there.
func (l *linter) paramFalsy(b *binding) bool {
	owner, calls, ok := l.liveCalls(b)
	if !ok || len(l.fnCalls[owner]) == 0 {
		return false
	}
	for _, c := range calls {
		n := len(c.call.Args)
		switch {
		case n > 0 && b.index >= n-1 && multi(c.call.Args[n-1]):
			return false // a call's values: unknown
		case b.index < n && !l.alwaysFalsy(c.call.Args[b.index]):
			return false
		}
	}
	return true
}

// noteZeroGuard records the locals an if rules out as zero divisors: an
// if whose then-block ends with a return or error(...), and whose
// condition, when false, proves b is not 0 (if b == 0, b <= 0, b < 1,
// 0 >= b, joined by or). Only an if in the block that declares b, outside
// loops, leaves the script (or b's function) whenever b is 0; where in
// that block it stands is not followed, as for the other bounds
// (zeroDivisor).
func (l *linter) noteZeroGuard(st *ast.IfStmt) {
	if len(st.Then) == 0 {
		return
	}
	switch last := st.Then[len(st.Then)-1].(type) {
	case *ast.ReturnStmt:
	case *ast.FuncCallStmt:
		c, ok := last.Expr.(*ast.FuncCallExpr)
		if !ok || !l.isGlobal(c.Func, "error") {
			return
		}
	default:
		return
	}
	for _, r := range holds(st.Condition, false, nil) {
		for _, side := range [2]relation{r, r.flipped()} {
			x, ok := side.lhs.(*ast.IdentExpr)
			if !ok {
				continue
			}
			b := l.resolved[x]
			if b == nil || b.fn != l.fn || b.loops != l.loops || len(b.guards) != len(l.guards) {
				continue
			}
			if excludesZero(side, b, l) {
				l.zeroChecked[b] = true
			}
		}
	}
}

// guardedNonZero reports whether guards prove the local b is not 0 where
// they hold: b > 0, b >= 1, b < 0, b ~= 0 ... in a then-block (under and),
// b == 0, b <= 0 ... in an else-block (under or), or their negations.
func guardedNonZero(l *linter, guards []guard, b *binding) bool {
	for _, g := range guards {
		for _, r := range holds(g.cond, g.then, nil) {
			if excludesZero(r, b, l) || excludesZero(r.flipped(), b, l) {
				return true
			}
		}
	}
	return false
}

// excludesZero reports whether r, read as b op literal, rules b = 0 out.
func excludesZero(r relation, b *binding, l *linter) bool {
	x, ok := r.lhs.(*ast.IdentExpr)
	if !ok || l.resolved[x] != b {
		return false
	}
	v, ok := literalValue(r.rhs)
	if !ok {
		return false
	}
	switch r.op {
	case "~=":
		return v == 0
	case ">":
		return v >= 0
	case ">=":
		return v > 0
	case "<":
		return v <= 0
	case "<=":
		return v < 0
	case "==":
		return v != 0
	}
	return false
}
