package gen

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// everyKind is a chunk with every statement and expression kind of
// gopher-lua's syntax tree.
const everyKind = `local a, b = 1, "s"
x, a.f = true, false
f(nil, ...)
do local c = {1, k = 2, [3] = 4} end
while a < 1 do break end
repeat a = a + 1 until a >= 2
if not a then elseif #b == 0 then else end
for i = 1, 10, 2 do end
for k, v in pairs(a) do end
function g.h:m(p, ...) return p .. "x", -p, p * 2, p and p or p end
local fn = function() end
goto done
::done::
return a:m(1)
`

// astKinds returns the statement and expression types gopher-lua's ast
// package declares, read from its source: the structs that embed StmtBase,
// ExprBase or ConstExprBase.
func astKinds(t *testing.T) []string {
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "github.com/yuin/gopher-lua/ast").Output()
	require.NoError(t, err)
	pkgs, err := parser.ParseDir(token.NewFileSet(), strings.TrimSpace(string(out)), nil, 0)
	require.NoError(t, err)
	var kinds []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok || strings.HasSuffix(ts.Name.Name, "Base") {
					return true
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					return true
				}
				for _, fd := range st.Fields.List {
					if id, ok := fd.Type.(*ast.Ident); ok && len(fd.Names) == 0 &&
						(id.Name == "StmtBase" || id.Name == "ExprBase" || id.Name == "ConstExprBase") {
						kinds = append(kinds, "*ast."+ts.Name.Name)
					}
				}
				return true
			})
		}
	}
	sort.Strings(kinds)
	return kinds
}

// reachable returns every statement and expression under v, found by
// reflection over the fields of the tree: what a walk must visit.
func reachable(v reflect.Value, out map[any]bool) {
	switch v.Kind() {
	case reflect.Interface:
		if !v.IsNil() {
			reachable(v.Elem(), out)
		}
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		x := v.Interface()
		_, isStmt := x.(lua.Stmt)
		_, isExpr := x.(lua.Expr)
		if isStmt || isExpr {
			out[x] = true
		}
		reachable(v.Elem(), out)
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			reachable(v.Index(i), out)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			reachable(v.Field(i), out)
		}
	}
}

// TestLuaWalkVisitsEveryNode walks a chunk that uses every node kind and
// checks that each statement and expression of the tree is visited once:
// a kind or a part the walk forgets fails here, and so does a kind a new
// gopher-lua adds that the chunk does not use yet.
func TestLuaWalkVisitsEveryNode(t *testing.T) {
	chunk, err := parse.Parse(strings.NewReader(everyKind), "every.lua")
	require.NoError(t, err)

	visits := map[any]int{}
	kinds := map[string]bool{}
	var opened []string
	depth, fields := 0, 0
	w := &luaWalk{
		stmt:   func(st lua.Stmt) bool { visits[st]++; kinds[fmt.Sprintf("%T", st)] = true; return true },
		expr:   func(e lua.Expr) bool { visits[e]++; kinds[fmt.Sprintf("%T", e)] = true; return true },
		field:  func(*lua.Field) { fields++ },
		assign: func(_ *lua.AssignStmt, _ int, id *lua.IdentExpr) { visits[id]++; kinds[fmt.Sprintf("%T", id)] = true },
		open:   func(o lua.PositionHolder) { depth++; opened = append(opened, fmt.Sprintf("%T", o)) },
		close:  func(lua.PositionHolder) { depth-- },
	}
	w.stmts(chunk)

	want := map[any]bool{}
	reachable(reflect.ValueOf(chunk), want)
	for n := range want {
		assert.Equal(t, 1, visits[n], "%T on line %d visited %d times", n, n.(lua.PositionHolder).Line(), visits[n])
	}
	for n := range visits {
		assert.True(t, want[n], "the walk visited a %T that is not in the tree", n)
	}

	var got []string
	for k := range kinds {
		got = append(got, k)
	}
	sort.Strings(got)
	assert.Equal(t, astKinds(t), got, "node kinds visited; a kind missing here needs a case in luawalk.go and a use in everyKind")

	assert.Equal(t, 0, depth, "open and close must pair")
	assert.Equal(t, []string{"*ast.DoBlockStmt", "*ast.WhileStmt", "*ast.RepeatStmt", "*ast.IfStmt", "*ast.IfStmt",
		"*ast.IfStmt", "*ast.IfStmt", // elseif: an if in else
		"*ast.NumberForStmt", "*ast.GenericForStmt", "*ast.FunctionExpr", "*ast.FunctionExpr"}, opened)
	assert.Equal(t, 3, fields, "fields of {1, k = 2, [3] = 4}")
}

// TestLuaWalkOrder checks that the walk meets what one line holds in the
// order it is written, which the locator depends on: assignment targets
// before values, a function's name before its body, a repeat's body
// before its condition (both in the body's scope, as in Lua 5.1's
// lparser.c repeatstat), and that scopes open after a loop's head.
func TestLuaWalkOrder(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"a[b] = c(d, e)", "a b c d e"},
		{"x, y.z = p, q", "=x y z p q"},
		{"function m.n(o) return r end", "m n { r }"},
		{"function m:n() return r end", "m { r }"},
		{"repeat local s = t until u", "{ t u }"},
		{"for i = j, k do local l = i end", "j k { i }"},
		{"for i, v in ipairs(w) do end", "ipairs w { }"},
		{"if a then b() elseif c then d() else e() end", "a { b } { c { d } { e } }"},
		{"local t = {f = g, [h] = i, j}", "f g h i j"},
		{"return o:m(a)", "o a"},
	} {
		chunk, err := parse.Parse(strings.NewReader(tc.src), "t.lua")
		require.NoError(t, err, tc.src)
		var seen []string
		w := &luaWalk{
			expr: func(e lua.Expr) bool {
				switch e := e.(type) {
				case *lua.IdentExpr:
					seen = append(seen, e.Value)
				case *lua.StringExpr:
					seen = append(seen, e.Value)
				}
				return true
			},
			assign: func(_ *lua.AssignStmt, _ int, id *lua.IdentExpr) { seen = append(seen, "="+id.Value) },
			open:   func(lua.PositionHolder) { seen = append(seen, "{") },
			close:  func(lua.PositionHolder) { seen = append(seen, "}") },
		}
		w.stmts(chunk)
		assert.Equal(t, tc.want, strings.Join(seen, " "), tc.src)
	}
}

// TestLuaWalkSkip checks that a hook returning false skips the parts of a
// node, and that exprParts walks all parts but the one excepted.
func TestLuaWalkSkip(t *testing.T) {
	chunk, err := parse.Parse(strings.NewReader("f(a, g(b)); t.k = KEYS[i]; do c() end"), "t.lua")
	require.NoError(t, err)
	var seen []string
	var w *luaWalk
	w = &luaWalk{
		stmt: func(st lua.Stmt) bool {
			_, isDo := st.(*lua.DoBlockStmt)
			return !isDo
		},
		expr: func(e lua.Expr) bool {
			switch e := e.(type) {
			case *lua.IdentExpr:
				seen = append(seen, e.Value)
			case *lua.FuncCallExpr:
				if id, ok := e.Func.(*lua.IdentExpr); ok && id.Value == "g" {
					return false // g(b): neither g nor b
				}
			case *lua.AttrGetExpr:
				if id, ok := e.Object.(*lua.IdentExpr); ok && id.Value == "KEYS" {
					w.exprParts(e, e.Object) // i, not KEYS
					return false
				}
			}
			return true
		},
	}
	w.stmts(chunk)
	assert.Equal(t, "f a t i", strings.Join(seen, " "))
}
