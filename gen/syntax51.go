package gen

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/luagen/luagen/internal/lua51"
)

// limitPrefix starts the lint's reports of a limit of Lua 5.1's compiler
// (limits.go), which Lua 5.1's own check finds as well.
const limitPrefix = "Redis cannot compile this script: "

// checkLua51 runs Lua 5.1's own syntax check (internal/lua51, a port of
// the parser Redis compiles scripts with, which luatest runs too) over
// text, Lua code whose lines are lines: gopher-lua, which the lint parses
// with, also reads Lua 5.2's goto and labels, which Redis refuses with
// "'=' expected near 'continue'" on every call. It reports the first error
// Lua 5.1 finds, with the server's message, at its line and at the token
// the message names, and returns whether text passed. #! lines are blanked
// first, as the lint blanks them (the shebang is not Lua; one anywhere else
// is reported by the header's parse). An error at a line where the lint
// already found that Redis cannot compile the script is left to the lint.
func checkLua51(r *reporter, text string, lines []string) bool {
	code := []byte(text)
	_, starts := splitLines(text)
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimLeft(line, " \t\ufeff"), "#!") {
			for j := starts[i]; j < starts[i]+len(line); j++ {
				code[j] = ' '
			}
		}
	}
	_, err := lua51.Check(string(code), "@user_script", 0)
	se, ok := errors.AsType[*lua51.SyntaxError](err)
	if !ok {
		return err == nil
	}
	msg := strings.TrimPrefix(se.Msg, fmt.Sprintf("user_script:%d: ", se.Line))
	line := min(max(se.Line, 1), len(lines))
	p := Pos{line, 1}
	if i := strings.LastIndex(msg, " near '"); i >= 0 && strings.HasSuffix(msg, "'") {
		near := msg[i+len(" near '") : len(msg)-1]
		if near == "<eof>" {
			p = Pos{len(lines), len(lines[len(lines)-1]) + 1}
		} else if col := strings.Index(lines[line-1], near); col >= 0 {
			p.Col = col + 1
		}
	}
	hint := ""
	switch l := lines[line-1]; {
	case strings.Contains(l, "goto"):
		hint = " (Redis runs Lua 5.1, which has no goto)"
	case strings.Contains(l, "::"):
		hint = " (Redis runs Lua 5.1, which has no labels)"
	}
	n := len(r.diags)
	r.errorf(p, "Lua syntax error: %s%s", msg, hint)
	// The lint's own limit checks (200 locals, 60 upvalues) say more, at
	// the local or upvalue itself.
	if d := r.diags[n]; slices.ContainsFunc(r.diags[:n], func(o Diagnostic) bool {
		return o.Path == d.Path && o.Line == d.Line && strings.HasPrefix(o.Msg, limitPrefix)
	}) {
		r.diags = r.diags[:n]
	}
	return false
}
