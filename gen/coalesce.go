package gen

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
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
	if !plainDecimal(ws[1].s) || err != nil || n < 2 || n > coalesceMax {
		p.r.errorf(p.pos(ws[1].col), "---@coalesce takes the most calls one merged run may hold, an integer from 2 to %d (default %d), not %q", coalesceMax, coalesceDefault, ws[1].s)
		return
	}
	p.s.Coalesce = n
	if len(ws) > 2 {
		p.r.errorf(p.pos(ws[2].col), "---@coalesce takes at most one number (the most calls per merged run); unexpected %q", ws[2].s)
	}
}

// plainDecimal reports whether s is written in plain decimal digits
// without a sign or a leading zero, as the tag's number must be.
func plainDecimal(s string) bool {
	if s == "" || s[0] == '0' {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// coalesceGlobals are the globals and library fields a script merged with
// others must not use, and why: each reaches state that lives for the
// whole server-side run, so a call would see what an earlier call of the
// run left there, or the whole run's KEYS and ARGV (runtime/coalesce_wire.go).
var coalesceGlobals = map[string]string{
	"_G":             "_G reaches the globals KEYS and ARGV, which in a merged run hold every call's keys and arguments",
	"getfenv":        "getfenv reaches the globals KEYS and ARGV, which in a merged run hold every call's keys and arguments",
	"setfenv":        "setfenv changes a function's globals for the rest of the run",
	"loadstring":     "code from loadstring reads the globals KEYS and ARGV, which in a merged run hold every call's keys and arguments",
	"load":           "code from load reads the globals KEYS and ARGV, which in a merged run hold every call's keys and arguments",
	"redis.setresp":  "redis.setresp changes the RESP version for the rest of the run, so later calls of a merged run would reply in it",
	"redis.set_repl": "redis.set_repl changes replication for the rest of the run, so later calls of a merged run would inherit it",
}

// math.random and math.randomseed are allowed: Redis 7.0 keeps one
// generator for the whole server, never reseeded per run (two EVALs of
// "return tostring(math.random())" return different numbers, and a seed
// set by one run holds for the next), so the calls of a merged run draw
// consecutive numbers of that stream exactly as separate runs would.

// What redis may be used as in a ---@coalesce script, and why anything
// else is refused: an alias or a value of redis, redis.call or
// redis.pcall could reach SELECT, redis.setresp or redis.set_repl where
// the checks above cannot see it.
const (
	coalesceBareRedis = "redis is used here other than as redis.<name> with a constant name, so an alias or a value of it could reach redis.setresp, redis.set_repl or SELECT unseen; write redis.<name>(...) where it is used"
	coalesceDynRedis  = "redis[...] with a computed name could reach redis.setresp or redis.set_repl unseen; write the field's name"
	coalesceCallValue = "%s is used here as a value, not called directly, so the command it runs (it could be SELECT) cannot be checked; call %s('COMMAND', ...) itself"
)

var (
	reBareRedis  = regexp.MustCompile(`(?:^|[^\w.])(redis)\s*(?:[^\s.\[\w]|$)`)
	reDynRedis   = regexp.MustCompile(`(?:^|[^\w.])(redis)\s*\[`)
	reRedisValue = regexp.MustCompile(`(?:^|[^\w.])(redis\s*(?:\.\s*p?call\b|\[[^\]]*\]))\s*(?:[^\s('"{\[\w]|$)`)
)

// coalesceUse is a use of what ---@coalesce refuses: its line, the
// pattern that finds it on the line and why it is refused.
type coalesceUse struct {
	line int
	re   *regexp.Regexp
	msg  string
}

// noteCoalesce records a use of what ---@coalesce refuses.
func (l *linter) noteCoalesce(line int, re *regexp.Regexp, msg string) {
	l.coalesceUses = append(l.coalesceUses, coalesceUse{line: line, re: re, msg: msg})
}

// noteGlobal records e when it is a global or a library field that
// coalescing refuses (see coalesceGlobals).
func (l *linter) noteGlobal(e ast.Expr) {
	switch e := e.(type) {
	case *ast.IdentExpr:
		if why, bad := coalesceGlobals[e.Value]; bad && l.scope.lookup(e.Value) == nil {
			l.noteCoalesce(e.Line(), l.wordRe(regexp.QuoteMeta(e.Value)), why)
		}
	case *ast.AttrGetExpr:
		if !l.isGlobal(e.Object, "redis") {
			return
		}
		k, ok := e.Key.(*ast.StringExpr)
		if !ok {
			l.noteCoalesce(e.Line(), reDynRedis, coalesceDynRedis)
			if l.s.Coalesce == 0 {
				l.r.errorf(l.loc.find(e.Line(), reDynRedis), "redis[...] with a computed name may be redis.call, which the analysis cannot follow there: every check (cluster keys, replies, raised errors, write commands) reads the calls of redis.call; write the field's name")
			}
			return
		}
		if why, bad := coalesceGlobals["redis."+k.Value]; bad {
			l.noteCoalesce(e.Line(), l.wordRe(`redis\s*\.\s*`+regexp.QuoteMeta(k.Value)), why)
		}
		if (k.Value == "call" || k.Value == "pcall") && !l.aliasInit[e] {
			// Walked only when not the function of a direct call (see
			// expr); an alias's calls are checked as direct ones.
			fn := "redis." + k.Value
			l.noteCoalesce(e.Line(), reRedisValue, fmt.Sprintf(coalesceCallValue, fn, fn))
		}
	}
}

// noteBareRedis records a use of the global redis that is not the object
// of a field access (see coalesceBareRedis).
func (l *linter) noteBareRedis(e *ast.IdentExpr) {
	l.noteCoalesce(e.Line(), reBareRedis, coalesceBareRedis)
	if l.s.Coalesce == 0 {
		l.r.errorf(l.loc.find(e.Line(), reBareRedis), "redis is used here other than as redis.<name> with a constant name, so a call of redis.call through it would escape the analysis: every check (cluster keys, replies, raised errors, write commands) reads the calls of redis.call; write redis.<name>(...) where it is used, or alias the function itself (local rcall = redis.call)")
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
		l.r.errorf(l.loc.find(u.line, u.re), "---@coalesce cannot merge this script: %s", u.msg)
	}
	if name, line, ok := l.recursion(); ok {
		l.r.errorf(l.loc.find(line, l.wordRe(regexp.QuoteMeta(name))), "---@coalesce cannot merge this script: function %s calls itself (directly or through other functions), and a merged run adds stack frames under every call, so a recursion that just fits alone (Lua 5.1 allows 200 nested C calls, pcall included, and 20,000 Lua calls) would overflow the stack merged and fail a call that succeeds alone", name)
	}
	for _, c := range l.calls {
		at := c.argPos(0)
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

// recursion reports a local function that can call itself: one whose
// body (or a function nested in it) reads, as an upvalue, a local holding
// a function that reads it back, directly or through others. It names the
// first such local and the line of its function. Reading is taken for
// calling: a function that only passes itself on is reported too.
func (l *linter) recursion() (name string, line int, ok bool) {
	byExpr := map[*ast.FunctionExpr]*fnState{}
	for _, f := range l.fns {
		if f.expr != nil {
			byExpr[f.expr] = f
		}
	}
	// funcs: the functions each local holding one was assigned, found
	// once per local.
	held := map[*binding][]*fnState{}
	funcs := func(b *binding) []*fnState {
		out, seen := held[b]
		if !seen {
			for _, v := range b.values {
				if fe, ok := v.(*ast.FunctionExpr); ok && byExpr[fe] != nil {
					out = append(out, byExpr[fe])
				}
			}
			held[b] = out
		}
		return out
	}
	const (
		unseen = iota
		onPath
		done
	)
	state := map[*binding]int{}
	// visit returns a local on a cycle reachable from b, or nil.
	var visit func(b *binding) *binding
	visit = func(b *binding) *binding {
		switch state[b] {
		case onPath:
			return b
		case done:
			return nil
		}
		state[b] = onPath
		for _, f := range funcs(b) {
			for c := range f.upvals {
				if len(funcs(c)) == 0 {
					continue
				}
				if on := visit(c); on != nil {
					return on
				}
			}
		}
		state[b] = done
		return nil
	}
	// Visit in line order, so the report is stable.
	var all []*binding
	for _, f := range l.fns {
		for b := range f.upvals {
			if len(funcs(b)) > 0 && !slices.Contains(all, b) {
				all = append(all, b)
			}
		}
	}
	slices.SortFunc(all, func(a, b *binding) int {
		return cmp.Or(cmp.Compare(funcs(a)[0].line, funcs(b)[0].line), strings.Compare(a.name, b.name))
	})
	for _, b := range all {
		if on := visit(b); on != nil {
			return on.name, funcs(on)[0].line, true
		}
	}
	return "", 0, false
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
