package gen

import "github.com/yuin/gopher-lua/ast"

// Keys a guard proves in the family. BullMQ removes a parent job's keys
// only when the parent is in the script's own queue:
//
//	local parentKey = rcall("HGET", jobKey, "parentKey")  -- stored data
//	local parentId = getJobIdFromKey(parentKey)
//	local parentPrefix = getJobKeyPrefix(parentKey, parentId)  -- string.sub(parentKey, 0, n)
//	if parentPrefix == baseKey then  -- baseKey: the queue's prefix, bull:{q}:
//	  removeJobKeys(parentKey)  -- parentKey .. ':logs', ...
//	end
//
// In the then-block parentPrefix is the text of baseKey, which holds the
// family's whole hash tag, and parentKey begins with it: a key built by
// appending to parentKey has the family's slot. The analysis proves that
// much and no more: the guard is an equality (==, or ~= in an else-block,
// under and/or/not as Lua evaluates them) between a value with a family's
// tag and a local or parameter never assigned again, or a prefix of one
// (string.sub(s, 1, n), s:sub(0, n), or a local function that returns
// only such a prefix of a parameter), taken while the code runs under it.

// taintAt is taintOf for e evaluated under guards: a value those guards
// prove to begin with a family's tagged text is in the family, and so is
// text appended to it.
func (l *linter) taintAt(e ast.Expr, guards []guard) taint {
	left := e
	for {
		c, ok := left.(*ast.StringConcatOpExpr)
		if !ok {
			break
		}
		left = c.Lhs
	}
	if id, ok := left.(*ast.IdentExpr); ok && len(guards) > 0 && l.provenTagged(id, guards) {
		return taint{origin: fromTagged}
	}
	return l.taintOf(e)
}

// provenTagged reports whether guards prove that the value of id begins
// with a family's tagged text.
func (l *linter) provenTagged(id *ast.IdentExpr, guards []guard) bool {
	b := l.resolved[id]
	if b == nil || !l.once(b) || l.metatables {
		return false
	}
	for _, g := range guards {
		for _, r := range holds(g.cond, g.then, nil) {
			if r.op != "==" {
				continue
			}
			for _, side := range [2]relation{r, r.flipped()} {
				if l.startsWith(side.lhs, b, 0) && l.taintOf(side.rhs).origin == fromTagged && tagText(side.rhs) {
					return true
				}
			}
		}
	}
	return false
}

// tagText reports whether e is a value whose whole text is the tagged
// one, not nil or false (which taintOf also counts as adding no origin).
func tagText(e ast.Expr) bool {
	switch e.(type) {
	case *ast.NilExpr, *ast.FalseExpr:
		return false
	}
	return true
}

// relation is one comparison a condition proves: lhs op rhs.
type relation struct {
	op       string
	lhs, rhs ast.Expr
}

// flipped is the relation with its sides swapped (a < b is b > a).
func (r relation) flipped() relation {
	op := map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "~=": "~="}[r.op]
	return relation{op, r.rhs, r.lhs}
}

// holds returns the comparisons a condition proves when it evaluates to
// truth: a comparison itself when true, its negation when false (a < b
// false is a >= b), through and (true: both sides hold), or (false: both
// sides fail) and not. The narrowing, the zero-divisor guards and the
// guards a division stands under all read conditions through it.
func holds(cond ast.Expr, truth bool, out []relation) []relation {
	switch c := cond.(type) {
	case *ast.RelationalOpExpr:
		op := c.Operator
		if !truth {
			op = map[string]string{"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "~=", "~=": "=="}[op]
		}
		out = append(out, relation{op, c.Lhs, c.Rhs})
	case *ast.LogicalOpExpr:
		if c.Operator == "and" && truth || c.Operator == "or" && !truth {
			out = holds(c.Lhs, truth, out)
			out = holds(c.Rhs, truth, out)
		}
	case *ast.UnaryNotOpExpr:
		out = holds(c.Expr, !truth, out)
	}
	return out
}

// once reports whether b holds one value wherever it is in scope: a local
// declared with a single value, or a parameter, never assigned again.
func (l *linter) once(b *binding) bool {
	return !b.reassigned && !b.bare && (b.param != nil || b.init != nil)
}

// startsWith reports whether the value of e begins with the value of b:
// e is b, or a prefix of a value that begins with b's (directly or through
// a local that holds one).
func (l *linter) startsWith(e ast.Expr, b *binding, depth int) bool {
	if depth > 8 {
		return false
	}
	if id, ok := e.(*ast.IdentExpr); ok {
		p := l.resolved[id]
		if p == b {
			return true
		}
		if p == nil || !l.once(p) || p.init == nil {
			return false
		}
		e = p.init
	}
	s := l.prefixOf(e, 0)
	return s != nil && l.startsWith(s, b, depth+1)
}

// prefixOf returns s when e is a prefix of s's value: string.sub(s, i, j)
// or s:sub(i, j) with i a literal 0 or 1 (Lua 5.1 reads 0 as 1), or a call
// of a local function whose body is only return <a prefix of its k-th
// parameter>, with s the call's k-th argument. Else nil.
func (l *linter) prefixOf(e ast.Expr, depth int) ast.Expr {
	c, ok := e.(*ast.FuncCallExpr)
	if !ok || depth > 8 {
		return nil
	}
	if c.Receiver != nil {
		if c.Method == "sub" && len(c.Args) >= 1 && fromStart(c.Args[0]) {
			return c.Receiver
		}
		return nil
	}
	if a, ok := c.Func.(*ast.AttrGetExpr); ok {
		if k, ok := a.Key.(*ast.StringExpr); ok && k.Value == "sub" && l.isGlobal(a.Object, "string") && len(c.Args) >= 2 && fromStart(c.Args[1]) {
			return c.Args[0]
		}
		return nil
	}
	id, ok := c.Func.(*ast.IdentExpr)
	if !ok {
		return nil
	}
	f := l.resolved[id]
	if f == nil || f.reassigned {
		return nil
	}
	fe := localFunc(f)
	if fe == nil || len(fe.Stmts) != 1 {
		return nil
	}
	ret, ok := fe.Stmts[0].(*ast.ReturnStmt)
	if !ok || len(ret.Exprs) != 1 {
		return nil
	}
	s, ok := l.prefixOf(ret.Exprs[0], depth+1).(*ast.IdentExpr)
	if !ok {
		return nil
	}
	p := l.resolved[s]
	if p == nil || p.param != fe || p.reassigned || p.index >= len(c.Args) {
		return nil
	}
	return c.Args[p.index]
}

// fromStart reports whether e is the literal 0 or 1, a string.sub start
// that keeps the first byte.
func fromStart(e ast.Expr) bool {
	n, ok := e.(*ast.NumberExpr)
	return ok && (n.Value == "0" || n.Value == "1")
}
