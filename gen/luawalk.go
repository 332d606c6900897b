package gen

import "github.com/yuin/gopher-lua/ast"

// luaWalk walks gopher-lua's syntax tree in source order and calls its
// hooks; it is the one place that knows the parts of every statement and
// expression. Its users are the linter (lint.go), which resolves names and
// records what the script reads, and the reply walk (replyshape.go), which
// finds the places that build replies. Source order matters to both: the
// locator (source.go) answers the k-th lookup of a pattern on a line with
// its k-th match, so constructs must be met in the order they are written.
// A nil hook is not called.
type luaWalk struct {
	// stmt is called before a statement's parts are walked; when it
	// returns false they are not, and the hook may walk them itself
	// (stmtParts), e.g. to act after them.
	stmt func(st ast.Stmt) bool
	// expr is called before an expression's parts are walked; when it
	// returns false they are not, and the hook may walk some of them
	// itself (exprParts with an exception).
	expr func(e ast.Expr) bool
	// field is called before the key and the value of each field of a
	// table constructor.
	field func(f *ast.Field)
	// assign is called, in place of expr, for a name that an assignment
	// statement assigns to: st.Lhs[i]. Assigning a name does not read it;
	// the other targets (t[k], t.k) are expressions that read t and k.
	assign func(st *ast.AssignStmt, i int, id *ast.IdentExpr)
	// open and close bracket the scope of each block: owner is the
	// *ast.DoBlockStmt, *ast.WhileStmt, *ast.RepeatStmt, *ast.IfStmt (once
	// for Then, once for Else; elseif is an if inside Else),
	// *ast.NumberForStmt or *ast.GenericForStmt whose body it is, or the
	// *ast.FunctionExpr. open comes after a loop's head and before its
	// body, where the loop's names come into scope. A repeat's condition
	// is walked before close, inside the body's scope, where Lua 5.1
	// keeps the body's locals.
	open, close func(owner ast.PositionHolder)
}

// stmts walks statements in order.
func (w *luaWalk) stmts(ss []ast.Stmt) {
	for _, st := range ss {
		if w.stmt == nil || w.stmt(st) {
			w.stmtParts(st)
		}
	}
}

// walkExpr walks e, which may be nil.
func (w *luaWalk) walkExpr(e ast.Expr) {
	if e != nil && (w.expr == nil || w.expr(e)) {
		w.exprParts(e, nil)
	}
}

func (w *luaWalk) exprs(es []ast.Expr) {
	for _, e := range es {
		w.walkExpr(e)
	}
}

// block walks ss as the scope of owner.
func (w *luaWalk) block(owner ast.PositionHolder, ss []ast.Stmt) {
	if w.open != nil {
		w.open(owner)
	}
	w.stmts(ss)
	if w.close != nil {
		w.close(owner)
	}
}

// stmtParts walks the parts of st.
func (w *luaWalk) stmtParts(st ast.Stmt) {
	switch st := st.(type) {
	case *ast.LocalAssignStmt:
		w.exprs(st.Exprs)
	case *ast.AssignStmt:
		for i, lhs := range st.Lhs {
			if id, ok := lhs.(*ast.IdentExpr); ok {
				if w.assign != nil {
					w.assign(st, i, id)
				}
				continue
			}
			w.walkExpr(lhs)
		}
		w.exprs(st.Rhs)
	case *ast.FuncCallStmt:
		w.walkExpr(st.Expr)
	case *ast.DoBlockStmt:
		w.block(st, st.Stmts)
	case *ast.WhileStmt:
		w.walkExpr(st.Condition)
		w.block(st, st.Stmts)
	case *ast.RepeatStmt:
		// The body's locals are in scope in the condition (Lua 5.1
		// lparser.c repeatstat: the condition is read before the body's
		// block is left), so the condition is walked inside the scope.
		if w.open != nil {
			w.open(st)
		}
		w.stmts(st.Stmts)
		w.walkExpr(st.Condition)
		if w.close != nil {
			w.close(st)
		}
	case *ast.IfStmt:
		w.walkExpr(st.Condition)
		w.block(st, st.Then)
		w.block(st, st.Else)
	case *ast.NumberForStmt:
		w.walkExpr(st.Init)
		w.walkExpr(st.Limit)
		w.walkExpr(st.Step)
		w.block(st, st.Stmts)
	case *ast.GenericForStmt:
		w.exprs(st.Exprs)
		w.block(st, st.Stmts)
	case *ast.FuncDefStmt:
		// function a.b() has Func a.b; function a:b() has Receiver a.
		w.walkExpr(st.Name.Func)
		w.walkExpr(st.Name.Receiver)
		w.walkExpr(st.Func)
	case *ast.ReturnStmt:
		w.exprs(st.Exprs)
	}
	// BreakStmt, LabelStmt and GotoStmt have no parts.
}

// exprParts walks the parts of e but except (nil for none), so that an
// expr hook that returned false can walk the rest: the key of KEYS[i]
// without KEYS, the arguments of redis.call(...) without redis.call.
func (w *luaWalk) exprParts(e, except ast.Expr) {
	walk := func(x ast.Expr) {
		if x != except {
			w.walkExpr(x)
		}
	}
	switch e := e.(type) {
	case *ast.AttrGetExpr:
		walk(e.Object)
		walk(e.Key)
	case *ast.FuncCallExpr:
		walk(e.Func)
		walk(e.Receiver)
		for _, a := range e.Args {
			walk(a)
		}
	case *ast.TableExpr:
		for _, f := range e.Fields {
			if w.field != nil {
				w.field(f)
			}
			walk(f.Key)
			walk(f.Value)
		}
	case *ast.FunctionExpr:
		w.block(e, e.Stmts)
	default:
		for _, x := range operands(e) {
			walk(x)
		}
	}
}

// operands returns the operands of an operator expression in source
// order, or nil for any other expression.
func operands(e ast.Expr) []ast.Expr {
	switch e := e.(type) {
	case *ast.LogicalOpExpr:
		return []ast.Expr{e.Lhs, e.Rhs}
	case *ast.RelationalOpExpr:
		return []ast.Expr{e.Lhs, e.Rhs}
	case *ast.StringConcatOpExpr:
		return []ast.Expr{e.Lhs, e.Rhs}
	case *ast.ArithmeticOpExpr:
		return []ast.Expr{e.Lhs, e.Rhs}
	case *ast.UnaryMinusOpExpr:
		return []ast.Expr{e.Expr}
	case *ast.UnaryNotOpExpr:
		return []ast.Expr{e.Expr}
	case *ast.UnaryLenOpExpr:
		return []ast.Expr{e.Expr}
	}
	return nil
}
