package gen

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/yuin/gopher-lua/ast"
)

// Bounds of ---@coalesce's number: the most calls runtime.Coalescer merges
// into one run of the script.
const (
	coalesceDefault = 64
	coalesceMax     = 1000
)

// coalesce parses "---@coalesce [max]".
func (p *headerParser) coalesce(ws []word) {
	if !p.once(ws[0]) {
		return
	}
	p.s.Coalesce = coalesceDefault
	p.s.CoalescePos = p.pos(ws[0].col)
	if len(ws) < 2 {
		return
	}
	n, err := strconv.Atoi(ws[1].s)
	if err != nil || n < 2 || n > coalesceMax {
		p.r.errorf(p.pos(ws[1].col), "---@coalesce takes the most calls one merged run may hold, an integer from 2 to %d (default %d), not %q", coalesceMax, coalesceDefault, ws[1].s)
		return
	}
	p.s.Coalesce = n
	if len(ws) > 2 {
		p.r.errorf(p.pos(ws[2].col), "---@coalesce takes at most one number (the most calls per merged run); unexpected %q", ws[2].s)
	}
}

// coalesceGlobals are the globals and library fields a script merged with
// others must not use, and why: each reaches state that lives for the
// whole server-side run, so a call would see what an earlier call of the
// run left there, or the whole run's KEYS and ARGV (runtime/coalesce_wire.go).
var coalesceGlobals = map[string]string{
	"_G":              "_G reaches the globals KEYS and ARGV, which in a merged run hold every call's keys and arguments",
	"getfenv":         "getfenv reaches the globals KEYS and ARGV, which in a merged run hold every call's keys and arguments",
	"setfenv":         "setfenv changes a function's globals for the rest of the run",
	"loadstring":      "code from loadstring reads the globals KEYS and ARGV, which in a merged run hold every call's keys and arguments",
	"redis.setresp":   "redis.setresp changes the RESP version for the rest of the run, so later calls of a merged run would reply in it",
	"redis.set_repl":  "redis.set_repl changes replication for the rest of the run, so later calls of a merged run would inherit it",
	"math.random":     "Redis seeds math.random once per run, so the calls of a merged run would draw different numbers than alone",
	"math.randomseed": "Redis seeds math.random once per run, so the calls of a merged run would share one generator",
}

// coalesceUse is a use of one of coalesceGlobals.
type coalesceUse struct {
	name string
	line int
}

// noteGlobal records e when it is a global or a library field that
// coalescing refuses (see coalesceGlobals).
func (l *linter) noteGlobal(e ast.Expr) {
	switch e := e.(type) {
	case *ast.IdentExpr:
		if _, bad := coalesceGlobals[e.Value]; bad && l.scope.lookup(e.Value) == nil {
			l.coalesceUses = append(l.coalesceUses, coalesceUse{e.Value, e.Line()})
		}
	case *ast.AttrGetExpr:
		k, ok := e.Key.(*ast.StringExpr)
		if !ok {
			return
		}
		for _, lib := range []string{"redis", "math"} {
			if l.isGlobal(e.Object, lib) {
				if _, bad := coalesceGlobals[lib+"."+k.Value]; bad {
					l.coalesceUses = append(l.coalesceUses, coalesceUse{lib + "." + k.Value, e.Line()})
				}
			}
		}
	}
}

// checkCoalesce reports what keeps a ---@coalesce script's calls from
// running back to back in one server-side run exactly as they would run
// alone (see runtime.Coalescer).
func (l *linter) checkCoalesce() {
	s := l.s
	if s.Coalesce == 0 {
		return
	}
	at := s.CoalescePos
	if !strings.HasPrefix(s.Body, "#!") {
		l.r.errorf(at, "---@coalesce needs a #!lua shebang: without one Redis checks maxmemory at a script's first write, which in a merged run only the first call's write would meet")
	}
	if s.AllowCrossSlot {
		l.r.errorf(at, "---@coalesce cannot merge a script with flags=allow-cross-slot-keys: merged calls must share one hash slot")
	}
	for _, u := range l.coalesceUses {
		name := u.name
		if i := strings.IndexByte(name, '.'); i >= 0 {
			name = regexp.QuoteMeta(name[:i]) + `\s*\.\s*` + regexp.QuoteMeta(name[i+1:])
		} else {
			name = regexp.QuoteMeta(name)
		}
		p := l.loc.find(u.line, l.wordRe(name))
		l.r.errorf(p, "---@coalesce cannot merge this script: %s", coalesceGlobals[u.name])
	}
	for _, c := range l.calls {
		at := c.pos
		if len(c.args) > 0 {
			at = c.args[0]
		}
		name, _, _ := commandOf(c.call.Args)
		switch {
		case len(c.call.Args) == 0:
		case name == "":
			l.r.errorf(at, "---@coalesce needs the command of every %s to be a string literal: it could be SELECT, which changes the database for the rest of a merged run", c.fn)
		case name == "select":
			l.r.errorf(at, "---@coalesce cannot merge this script: SELECT changes the database for the rest of the run, so later calls of a merged run would use it")
		}
	}
}

// wordRe returns (and caches) the pattern of name as a whole word.
func (l *linter) wordRe(name string) *regexp.Regexp {
	key := "\x00word " + name
	if re := l.regexps[key]; re != nil {
		return re
	}
	re := regexp.MustCompile(`\b` + name + `\b`)
	if strings.HasPrefix(name, "_") {
		re = regexp.MustCompile(`(?:^|[^\w])(` + name + `)\b`)
	}
	l.regexps[key] = re
	return re
}
