package gen

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/yuin/gopher-lua/ast"
)

// checkReplyHeader reports header lines whose reply values cannot work
// whatever the body does: error codes that clients and the runtime read as
// the server's own, and ---@error values a bool return produces itself.
func checkReplyHeader(r *reporter, s *Script) {
	for _, e := range s.Errors {
		if why, ok := reservedCodes[e.Value]; ok {
			r.errorf(e.ValuePos, "---@error %s is a code Redis itself replies with, and %s: choose a code of your own, e.g. %s_%s", e.Value, why, "SCRIPT", e.Value)
		}
	}
	ret := s.Return
	if ret == nil || ret.Elem != Bool || (ret.Shape != ShapeScalar && ret.Shape != ShapeOptional) {
		return
	}
	if ret.Shape == ShapeOptional {
		r.errorf(ret.Pos, "---@return bool? cannot tell false from no reply: Redis sends Lua false as a nil reply, so every false arrives as a nil *bool; declare ---@return bool (1 and 0) or ---@return int64")
		return
	}
	for _, e := range s.Errors {
		var clash string
		switch e.Value {
		case "nil":
			clash = "Redis sends Lua false as a nil reply, so every false would be " + sentinelName(e)
		case "0":
			clash = "a bool reply 0 is false, so every 0 would be " + sentinelName(e)
		case "1":
			clash = "Redis sends Lua true as 1, so every true would be " + sentinelName(e)
		default:
			continue
		}
		r.errorf(e.ValuePos, "---@error %s collides with ---@return bool (line %d): %s; return 1 and 0 under ---@return int64 with ---@status 1 and 0, or pick another error value", e.Value, ret.Pos.Line, clash)
	}
}

// checkReplies runs the reply-shape analysis on the script's main chunk
// (see replyshape.go) and reports what does not fit the header. It first
// picks the bound of the int64 args the script turns into numbers without
// an ---@arg range (chooseBound), then records on each ---@arg what the
// generated method checks before sending (setChecks).
func (l *linter) checkReplies(chunk []ast.Stmt) {
	w := &replyWalk{l: l, sh: l.newShaper(maxExact)}
	w.walk(chunk)
	bound := l.chooseBound(w, chunk)
	sh := l.newShaper(bound)
	l.runReplies(w, sh, l.r, chunk)
	if sh.steps <= 0 {
		// Past the bound every value is unknown, which the checks pass:
		// say so rather than let a wrong number through silently.
		l.r.errorf(Pos{1, 1}, "the reply and number analysis stopped after %d evaluation steps (BullMQ's largest script takes about 500): locals and helpers feed each other in too many ways, so what this script returns and writes as text is not checked; split it into simpler helpers (a helper that calls another twice with different values, or a local assigned from many others, multiplies the work)", shaperSteps)
	}
	l.checkEscapedHelpers(sh)
	l.setChecks(sh, bound)
}

// reFunctionKw finds the function keyword of a helper's definition (a
// pattern of its own, so that the locator's count of it is this check's).
var reFunctionKw = regexp.MustCompile(`(\bfunction)\b`)

// checkEscapedHelpers reports a local function that returns the caller's
// number (tonumber(ARGV[i])) but is also used other than by calling it
// (passed on, stored): the analysis follows a helper's result only through
// direct calls, so what is done with that number elsewhere would go
// unchecked.
func (l *linter) checkEscapedHelpers(sh *shaper) {
	for _, f := range l.fns {
		fe := f.expr
		b := l.owner[fe]
		if fe == nil || b == nil || localFunc(b) != fe || !l.escaped[b] {
			continue
		}
		for _, v := range sh.fnResult(fe, fe.Line()) {
			if v.args == 0 || v.kind != vInt && v.kind != vNum && v.kind != vFrac && v.kind != vMaybeFrac {
				continue
			}
			l.r.errorf(l.loc.find(fe.Line(), reFunctionKw), "%s returns the caller's number (ARGV), but the script also uses %s other than by calling it (passes it on or stores it), so the analysis cannot follow what is done with that number there: call %s only directly, or convert ARGV where the number is used", b.name, b.name, b.name)
			break
		}
	}
}

func (l *linter) newShaper(bound float64) *shaper {
	return &shaper{l: l, memo: map[*binding]lset{}, busy: map[*binding]bool{}, steps: shaperSteps, hit: math.MaxInt,
		converted: map[int]bool{}, defBound: bound, fnMemo: map[*ast.FunctionExpr]lset{}, fnBusy: map[*ast.FunctionExpr]bool{}}
}

// chooseBound returns the bound the generated method checks for an int64
// arg without an ---@arg range that the script turns into a number: the
// largest power of two from 2^53 down to 2^31 under which no number the
// script replies or writes as text goes wrong, so that an ordinary script
// needs nothing (limit - count - 1 takes 2^52, 'x' .. n 2^46). When even
// 2^31 does not do, the analysis reports at 2^31, asking for a range.
func (l *linter) chooseBound(w *replyWalk, chunk []ast.Stmt) float64 {
	var adaptive uint64
	for i, a := range l.s.Args {
		if a.Type.Elem == Int64 && a.Range == nil && a.Template == nil {
			adaptive |= 1 << min(i, 63)
		}
	}
	if adaptive == 0 {
		return maxExact
	}
	for b := float64(maxExact); ; b /= 2 {
		c := l.runReplies(w, l.newShaper(b), &reporter{path: l.r.path}, chunk)
		if c.trouble&adaptive == 0 || b <= minDefaultBound {
			return b
		}
	}
}

// setChecks records on each ---@arg the bound the generated method checks
// before sending: the ---@arg range, else, for a number the script turns
// into a Lua number, what the analysis assumed (bound for an int64, the
// range of a Duration for a time.Time).
func (l *linter) setChecks(sh *shaper, bound float64) {
	for i, a := range l.s.Args {
		if a.Range != nil {
			a.Check = a.Range
			continue
		}
		if !sh.converted[i] {
			continue
		}
		b := typeBound(a, bound)
		switch a.Type.Elem {
		case Int64, Time:
			a.Check = &ArgRange{numeric: true, lo: b.lo, hi: b.hi}
		}
	}
}

// runReplies checks every reply site and every number written as text
// against the header with the shaper sh, reporting to r, and returns the
// checker (whose trouble says which args the number problems involve).
func (l *linter) runReplies(w *replyWalk, sh *shaper, r *reporter, chunk []ast.Stmt) *replyChecker {
	c := &replyChecker{r: r, s: l.s, errInts: map[string]bool{}, errCodes: map[string]bool{}, bound: sh.defBound}
	for _, e := range l.s.Errors {
		switch {
		case e.Value == "nil":
			c.errNil = true
		case isCode(e.Value):
			c.errCodes[e.Value] = true
		default:
			c.errInts[e.Value] = true
		}
	}
	for _, ns := range w.numSites {
		vals := sh.eval(ns.expr)
		if ns.coerce {
			vals = sh.coerce(vals, ns.expr.Line())
		}
		if ns.text {
			c.checkText(ns, vals)
		}
	}
	var all lset
	for _, site := range w.sites {
		if site.ret == nil {
			c.checkReserved(site, sh.message(site.kind, site.expr, site.pos.Line))
		}
	}
	if w.resp3 {
		// After redis.setresp(3) a RESP3 caller gets false as a boolean
		// and redis.call returns nil rather than false (checked with
		// redis-cli -3): leave the replies alone.
		return c
	}
	for _, site := range w.sites {
		if site.ret == nil {
			continue
		}
		vals := lset{{kind: vNil, what: "an empty return (nil)", line: site.pos.Line}}
		if len(site.ret.Exprs) > 0 {
			vals = sh.eval(site.ret.Exprs[0])
		}
		all = append(all, vals...)
		if len(site.ret.Exprs) > 0 && isFalse(site.ret.Exprs[0]) && l.s.Return != nil && l.s.Return.Shape == ShapeScalar && l.s.Return.Elem == Bool {
			c.r.errorf(site.pos, "return false reaches the caller as a nil reply, not a bool (Redis converts Lua false to nil): return 0 for false and 1 for true")
			continue
		}
		for _, v := range vals {
			c.checkTop(site.pos, v)
		}
	}
	if mayFallOff(chunk) {
		all = append(all, lval{kind: vNil})
	}
	c.checkProduced(all, w.raises)
	return c
}

// replyChecker compares values with the header of one script.
type replyChecker struct {
	r *reporter
	s *Script
	// trouble are the ---@arg positions (bit i for ARGV[i+1]) that the
	// numbers reported involve (see chooseBound).
	trouble  uint64
	errNil   bool
	errInts  map[string]bool
	errCodes map[string]bool
	bound    float64 // the bound assumed for an int64 arg without a range
}

// errorCode is the code of an error reply's message as the runtime reads
// it: its first word after a leading "ERR ". ok is false when the message
// is not known that far.
func errorCode(v lval) (string, bool) {
	if !v.known && !v.prefix {
		return "", false
	}
	msg := strings.TrimPrefix(v.lit, "ERR ")
	code, _, cut := strings.Cut(msg, " ")
	if !cut && !v.known {
		return "", false
	}
	return code, true
}

// checkReserved reports an error reply built with a reserved code.
func (c *replyChecker) checkReserved(site replySite, v lval) {
	code, ok := errorCode(v)
	if !ok {
		return
	}
	if why, ok := reservedCodes[code]; ok {
		c.r.errorf(site.pos, "this error reply starts with %s, a code Redis itself replies with, and %s: choose a code of your own, e.g. SCRIPT_%s", code, why, code)
	}
}

// at names where v was made when it is not where it is reported.
func (c *replyChecker) at(p Pos, v lval) string {
	if v.line > 0 && v.line != p.Line {
		return " (" + c.r.lineRef(v.line, p.Line) + ")"
	}
	return ""
}

// checkTop checks one value a return can send against the header.
func (c *replyChecker) checkTop(p Pos, v lval) {
	ret := c.s.Return
	switch {
	case v.kind == vUnknown, v.reassigned && !v.inexact:
		// A value of a local assigned more than once may be overwritten
		// before the return, but a number that may be inexact is one on
		// some path whatever the order: the union of what a local holds
		// bounds every value it has.
		return
	case ret != nil && ret.Shape == ShapeDiscard:
		// ---@return none: the caller gets only the error of an error
		// reply or a declared ---@error value, so any reply fits (an
		// undeclared error code too, as without a ---@return); whether the
		// ---@error values can be produced is still checked.
		return
	}
	switch v.kind {
	case vErr:
		code, ok := errorCode(v)
		if !ok || !isCode(code) || reservedCodes[code] != "" || c.errCodes[code] || ret == nil || ret.Shape == ShapeNone {
			return
		}
		c.r.errorf(p, "%s%s has code %s, which no ---@error declares: add ---@error %s Name description so that callers can match it with errors.Is", v.what, c.at(p, v), code, code)
		return
	case vFalse, vNil:
		if v.data || c.errNil || ret == nil || ret.Shape == ShapeNone || ret.Shape == ShapeOptional || ret.Elem == Bool && ret.Shape == ShapeScalar {
			return
		}
		hint := "declare ---@error nil Name"
		if ret.Shape == ShapeScalar {
			hint += ", or ---@return " + ret.Elem.String() + "?"
		}
		if v.kind == vFalse && v.what != "false" {
			c.r.errorf(p, "%s%s can be false, which reaches the caller as a nil reply (Redis sends Lua false as nil), which ---@return %s cannot hold: %s", v.what, c.at(p, v), typeString(ret), hint)
		} else if v.kind == vFalse {
			c.r.errorf(p, "%s%s reaches the caller as a nil reply (Redis sends Lua false as nil), which ---@return %s cannot hold: %s", v.what, c.at(p, v), typeString(ret), hint)
		} else {
			c.r.errorf(p, "%s%s is a nil reply, which ---@return %s cannot hold: %s", v.what, c.at(p, v), typeString(ret), hint)
		}
		return
	case vInt, vNum:
		if v.known && c.errInts[v.lit] {
			return
		}
		if !v.known && len(c.errInts) > 0 {
			return // it may be one of the declared error values
		}
	case vTrue:
		if c.errInts["1"] {
			return
		}
	}
	if ret == nil {
		return
	}
	v.what += c.at(p, v)
	for _, m := range c.problems(v, ret.Type, ret, "---@return "+typeString(ret)) {
		c.r.errorf(p, "%s", m)
	}
}

func isIntType(e Scalar) bool { return e == Int64 || e == Duration || e == Time }

// problems lists what is wrong with sending v as a value of type t; ret
// is set for the whole reply (its tuple fields are checked too).
//
// name is how messages call the type: "---@return int64" for the whole
// reply, "---@field left int64" or "an element of ---@return []int64".
func (c *replyChecker) problems(v lval, t Type, ret *Return, name string) []string {
	top := ret != nil
	switch t.Shape {
	case ShapeNone, ShapeDiscard:
		return nil
	case ShapeStatus:
		switch v.kind {
		case vStr, vStatus, vUnknown, vTrue, vFalse, vNil, vErr:
			return nil
		case vInt, vNum:
			if v.known {
				return []string{fmt.Sprintf("return %s: neither ---@return status nor an ---@error covers this integer reply: declare ---@error %s Name, or reply with redis.status_reply('OK')", v.lit, v.lit)}
			}
		}
		return c.scalarMismatch(v, "status", "a status reply")
	case ShapeSlice, ShapeMap, ShapeTuple:
		if v.kind != vArray {
			switch v.kind {
			case vUnknown, vFalse, vNil, vErr:
				return nil
			case vInt:
				if v.known && top {
					return []string{fmt.Sprintf("return %s: neither %s nor an ---@error covers this integer reply: declare ---@error %s Name", v.lit, name, v.lit)}
				}
			}
			return c.scalarMismatch(v, name, "an array")
		}
		return c.array(v, t, ret, name)
	}
	// T and T?: one value.
	e := t.Elem
	switch v.kind {
	case vFrac, vMaybeFrac:
		if v.inexact && isIntType(e) {
			c.trouble |= v.args
			return []string{c.inexactMsg(v, name)}
		}
		if t.Truncated && isIntType(e) {
			return nil // the header says Redis' truncation is meant
		}
		what := fmt.Sprintf("%s may not be an integer, and Redis truncates a Lua number to an integer reply (2.5 * 1.5 → 3)", v.what)
		if v.kind == vFrac {
			what = fmt.Sprintf("%s is not an integer, and Redis truncates a Lua number to an integer reply (3.7 → 3)", v.what)
		}
		switch {
		case e == Float64:
			return []string{what + ": return it as a string, string.format('%.17g', x): float64 decodes from a string reply, and tostring keeps only 14 digits"}
		case e == Duration || e == Time:
			return []string{"round it yourself (math.floor): " + what}
		case isIntType(e):
			// The header fix first (issue 33), then the Lua one.
			return []string{fmt.Sprintf("declare %s as float64 and return string.format('%%.17g', x), or declare it %s truncated if Redis' truncation toward zero is meant, or round it yourself (math.floor): %s", name, name, what)}
		}
		return []string{what + ": return a string instead"}
	case vInt, vNum:
		switch {
		case isIntType(e) || e == Float64:
			return nil
		case e == Bool:
			if v.known && v.lit != "0" && v.lit != "1" {
				return []string{fmt.Sprintf("return %s: neither ---@return bool (1 or 0) nor an ---@error covers this integer reply: declare ---@error %s Name, or return 1 or 0", v.lit, v.lit)}
			}
			return nil
		case v.known && top:
			return []string{fmt.Sprintf("return %s: neither %s nor an ---@error covers this integer reply: declare ---@error %s Name, or return tostring(n)", v.lit, name, v.lit)}
		}
		return c.scalarMismatch(v, name, "a string reply")
	case vStr, vStatus:
		switch {
		case e == String || e == Bytes || e == Float64:
			return nil
		case isIntType(e) && v.kind == vStatus:
			return []string{fmt.Sprintf("%s is a status reply, but %s decodes only an integer reply", v.what, name)}
		case isIntType(e) && v.known:
			if _, err := strconv.ParseInt(v.lit, 10, 64); err == nil {
				return nil // integer text decodes, all 64 bits of it
			}
			return []string{fmt.Sprintf("%s is a string that is not integer text, and %s decodes only an integer reply or integer text (Redis sends a Lua string as a bulk string)", v.what, name)}
		case isIntType(e) && v.prefix && !intTextPrefix(v.lit):
			return []string{fmt.Sprintf("%s starts with %q, so it is not integer text, and %s decodes only an integer reply or integer text", v.what, v.lit, name)}
		case isIntType(e):
			// Text the server or the caller gives (HGET of a counter, a
			// ZSCORE of an integral score): integer text decodes, all 64
			// bits of it; other text is a *runtime.DecodeError at run time.
			return nil
		}
		return c.scalarMismatch(v, name, "1 or 0")
	case vArray:
		return []string{fmt.Sprintf("%s is sent as an array, but %s wants one value", v.what, name)}
	}
	return nil
}

// scalarMismatch reports a value of a known kind that the type never
// decodes; want says what the type needs.
func (c *replyChecker) scalarMismatch(v lval, name, want string) []string {
	var got string
	switch v.kind {
	case vInt, vNum:
		got = "an integer reply"
	case vStr:
		got = "a string"
	case vStatus:
		got = "a status reply"
	case vTrue:
		got = "true, sent as the integer 1,"
	case vArray:
		got = "an array"
	default:
		return nil
	}
	return []string{fmt.Sprintf("%s is %s, but %s wants %s", v.what, got, name, want)}
}

// array checks the elements of a table sent under []T, map[string]string
// or a tuple.
func (c *replyChecker) array(v lval, t Type, ret *Return, name string) []string {
	var out []string
	elemType := func(i int) (Type, string, bool) {
		switch t.Shape {
		case ShapeSlice:
			return Type{Shape: ShapeScalar, Elem: t.Elem, Unit: t.Unit, Truncated: t.Truncated}, "an element of " + name, true
		case ShapeMap:
			return Type{Shape: ShapeScalar, Elem: String}, "an element of " + name, true
		}
		if ret != nil && i < len(ret.Fields) {
			f := ret.Fields[i]
			return f.Type, "---@field " + f.Name + " " + typeString(&Return{Type: f.Type}), true
		}
		return Type{}, "", false
	}
	if v.each != nil {
		if t.Shape == ShapeMap && !v.pairs {
			return []string{fmt.Sprintf("%s is a list of single values, not field, value pairs, but %s decodes a flat array field, value, ... (the caller would get the values paired with each other, or a decode error): return HGETALL, or build the pairs in a table", v.what, name)}
		}
		for _, ev := range v.each {
			if ev.kind == vFalse {
				if !ev.data {
					if et, _, _ := elemType(0); t.Shape != ShapeTuple && et.Elem != Bool {
						out = append(out, fmt.Sprintf("%s may hold nil elements (Redis sends a nil reply inside an array to Lua as false, and false back as a nil element), which %s cannot hold", v.what, name))
					}
				}
				continue
			}
			n := 1
			if t.Shape == ShapeTuple && ret != nil {
				n = len(ret.Fields)
			}
			for i := 0; i < n; i++ {
				et, ename, ok := elemType(i)
				if !ok {
					continue
				}
				out = append(out, c.problems(ev, et, nil, ename)...)
			}
		}
		return out
	}
	if t.Shape == ShapeMap && !v.more && len(v.elems)%2 == 1 && !slices.ContainsFunc(v.elems, func(ev lset) bool {
		return slices.ContainsFunc(ev, func(x lval) bool { return x.kind == vNil || x.kind == vUnknown })
	}) {
		out = append(out, fmt.Sprintf("the table has %d elements, an odd number, but %s decodes a flat array field, value, ... (the caller gets a decode error): give every field a value", len(v.elems), name))
	}
	for i, ev := range v.elems {
		for _, x := range ev {
			if x.kind != vNil || x.reassigned {
				continue
			}
			if i < len(v.elems)-1 || v.more || t.Shape == ShapeTuple {
				hint := "send false for a nil element, or a placeholder such as 0 or ''"
				if x.hint != "" {
					hint = x.hint
				}
				out = append(out, fmt.Sprintf("element %d of the table may be nil%s, and Redis ends an array at its first nil, so the caller would get %d element(s): %s", i+1, paren(x.what, "nil"), i, hint))
			}
			break
		}
		et, ename, ok := elemType(i)
		if !ok {
			continue
		}
		for _, x := range ev {
			if x.reassigned && !x.inexact {
				continue
			}
			switch x.kind {
			case vNil, vUnknown:
				continue
			case vFalse:
				if !x.data && et.Shape != ShapeOptional && et.Elem != Bool {
					out = append(out, fmt.Sprintf("element %d of the table may be false%s, which Redis sends as a nil element; %s cannot hold it: send a value of its type", i+1, paren(x.what, "false"), ename))
				}
				continue
			}
			for _, m := range c.problems(x, et, nil, ename) {
				out = append(out, fmt.Sprintf("element %d of the table: %s", i+1, m))
			}
		}
	}
	if t.Shape == ShapeTuple && ret != nil && !v.more && v.elems != nil && len(v.elems) != len(ret.Fields) {
		out = append(out, fmt.Sprintf("the table has %d elements, but tuple %s has %d ---@field lines", len(v.elems), ret.Tuple, len(ret.Fields)))
	}
	return out
}

// checkProduced reports ---@error values that no return can produce,
// when every return's value is known.
func (c *replyChecker) checkProduced(all lset, raises bool) {
	for _, v := range all {
		if v.kind == vUnknown {
			return
		}
	}
	for _, e := range c.s.Errors {
		produced := false
		for _, v := range all {
			switch {
			case e.Value == "nil":
				produced = produced || v.kind == vNil || v.kind == vFalse
			case isCode(e.Value):
				code, ok := errorCode(v)
				produced = produced || raises || v.kind == vErr && (!ok || code == e.Value)
			default:
				produced = produced || v.kind == vInt && (!v.known || v.lit == e.Value) ||
					v.kind == vNum || v.kind == vMaybeFrac || v.kind == vTrue && e.Value == "1"
			}
		}
		if !produced {
			c.r.errorf(e.ValuePos, "---@error %s %s: no return of the script can produce %s (the analysis knows every reply it sends): return it, or drop the line", e.Value, e.Name, e.Value)
		}
	}
}

func isFalse(e ast.Expr) bool {
	_, ok := e.(*ast.FalseExpr)
	return ok
}

// paren is " (what)" unless what says no more than word.
func paren(what, word string) string {
	if what == word || what == "" {
		return ""
	}
	return " (" + what + ")"
}

// inexactMsg is the message for a number that may not reach the caller as
// the integer it is; it leads with the header line that fixes it, when
// one does.
func (c *replyChecker) inexactMsg(v lval, name string) string {
	why := "a Lua number holds integers exactly only up to 2^53 (9007199254740992), and Redis sends one beyond int64, or NaN, as -9223372036854775808, and truncates a fraction"
	if v.hint != "" {
		return fmt.Sprintf("%s: %s may not reach the caller as the integer it is", v.hint, v.what)
	}
	if fix := c.headerFix(v.args, overLimit(v, maxExact)); fix != "" {
		return fmt.Sprintf("%s: %s may not reach the caller as the integer it is%s: %s", fix, v.what, reach(v), why)
	}
	return fmt.Sprintf("declare %s as string and return string.format('%%d', x), or keep it within ±2^53 (e.g. compute it from numbers the server returns, as INCRBY's reply): %s may not reach the caller as the integer it is%s: %s", name, v.what, reach(v), why)
}

// reach says how far a bounded number may go.
func reach(v lval) string {
	if !v.ranged || v.fbits >= 53 {
		return ""
	}
	m := max(-v.lo, v.hi)
	if v.fbits > 0 {
		return fmt.Sprintf(" (it may reach %s and carry a fraction, exact only below %s)", boundText(m), boundText(math.Ldexp(maxExact, -v.fbits)))
	}
	return fmt.Sprintf(" (it may reach %s)", boundText(m))
}

// headerFix is the one header line that bounds the caller's numbers a
// reported number is computed from: a range on the first such ---@arg
// (or, for a string one, a number type with a range); "" when none does.
// scale is how many times too large the number may get (its reach over
// the limit it must stay under; 0 when unknown): a suggested range is the
// arg's present one shrunk that much (as if the number grew in step with
// the arg), so that it is narrower than the present one, and none is
// suggested when no range of at least 1 would do.
func (c *replyChecker) headerFix(args uint64, scale float64) string {
	if scale < 0 {
		return "" // no range helps (a fraction carried through products)
	}
	var fix string
	var others []string
	for i, p := range c.s.Args {
		if i > 63 || args&(1<<i) == 0 || p.Name == "" || p.Type.Elem == Bool {
			continue
		}
		if fix != "" {
			others = append(others, p.Name)
			continue
		}
		desc := p.Desc
		if desc == "" {
			desc = "description"
		}
		name := p.Name
		if p.Variadic {
			name = "..." + name
		}
		typ := typeString(&Return{Type: p.Type})
		if p.Type.Elem.needsUnit() {
			typ += " " + map[bool]string{true: "s", false: "ms"}[p.Type.Unit == time.Second]
		}
		example := "[0,1000000]"
		if scale == 0 && p.Range != nil && p.Range.numeric && p.Type.Elem != String && p.Type.Elem != Bytes {
			continue // ranged already, and how far the number goes is not known
		}
		if b := typeBound(p, c.bound); b.bounded && scale > 1 {
			m := niceBelow(math.Max(-b.lo, b.hi) / scale)
			if m < 1 {
				continue // no integer range keeps it: the general fix
			}
			lo := 0.0
			if b.lo < 0 {
				lo = -m
			}
			example = "[" + strconv.FormatFloat(lo, 'f', -1, 64) + "," + strconv.FormatFloat(m, 'f', -1, 64) + "]"
		}
		switch {
		case p.Type.Elem == String || p.Type.Elem == Bytes:
			fix = fmt.Sprintf("declare %s a number with the range it takes: ---@arg %s int64 %s %s", p.Name, name, example, desc)
		case p.Range != nil:
			fix = fmt.Sprintf("narrow the range of %s on its ---@arg line (now %s), e.g. ---@arg %s %s %s %s", p.Name, p.Range.Text, name, typ, example, desc)
		default:
			fix = fmt.Sprintf("give %s the range it takes: ---@arg %s %s %s %s", p.Name, name, typ, example, desc)
		}
	}
	if len(others) > 0 {
		fix += " (or bound " + listingAnd(others) + " likewise)"
	}
	return fix
}

// niceBelow returns the largest 1, 2 or 5 times a power of ten at most f
// (0 below 1).
func niceBelow(f float64) float64 {
	if f < 1 {
		return 0
	}
	p := math.Pow(10, math.Floor(math.Log10(f)))
	for _, d := range []float64{5, 2, 1} {
		if d*p <= f {
			return d * p
		}
	}
	return p
}

// textArg reports whether args include a string ---@arg: the caller's
// text, which a declared number type would bound.
func (c *replyChecker) textArg(args uint64) bool {
	for i, p := range c.s.Args {
		if i < 64 && args&(1<<i) != 0 && (p.Type.Elem == String || p.Type.Elem == Bytes) {
			return true
		}
	}
	return false
}

// checkText reports a number written as text that Lua 5.1 writes with an
// exponent or rounded: its tostring and .. use %.14g, so 1e15 becomes
// "1e+15" and 1/3 "0.33333333333333", which the next reader of the text
// (the script's next call, another service) takes for another number.
func (c *replyChecker) checkText(ns numSite, vals lset) {
	limit, fracOK, writes := textExact, false, "writes a number with %.14g (1e15 becomes \"1e+15\", 1/3 \"0.33333333333333\")"
	fix := "write string.format('%d', x) for an integer, string.format('%.17g', x) for a fraction"
	switch ns.conv {
	case 'd', 'i', 'u', 'c', 'o', 'x', 'X':
		// The conversion takes the integer part (Lua 5.1 casts the
		// double to long long): a fraction is dropped as meant, but past
		// 2^53 the double is not the integer computed.
		limit, fracOK = maxExact, true
		writes = "writes the integer the double holds, which past 2^53 (9007199254740992) is not the integer computed and past 2^63 is undefined"
		fix = "keep it within ±2^53"
	case 'r':
		limit, fracOK = maxExact, true
		writes = "writes a number with %.17g, exact for a double, but past 2^53 (9007199254740992) the double is not the integer computed, and from 1e17 on the text has an exponent (\"1e+17\"), which INCRBY refuses"
		fix = "keep it within ±2^53"
	case 'f':
		limit, fracOK = maxExact, true
		writes = "writes every integer digit of the double, which past 2^53 (9007199254740992) is not the number computed"
		fix = "keep it within ±2^53"
	case 'e', 'E', 'g', 'G':
		p := ns.prec
		if p < 0 {
			p = 6
		}
		if ns.conv == 'e' || ns.conv == 'E' {
			p++ // digits after the point, and one before it
		}
		p = max(p, 1)
		if p >= 17 {
			return // %.17g is exact for every double
		}
		limit = math.Pow(10, float64(p))
		writes = fmt.Sprintf("keeps %d significant digits (%s of 1234567 is %q)", p, ns.how, strconv.FormatFloat(1234567, map[bool]byte{true: 'e', false: 'g'}[ns.conv == 'e' || ns.conv == 'E'], p-map[bool]int{true: 1, false: 0}[ns.conv == 'e' || ns.conv == 'E'], 64))
	}
	for _, v := range vals {
		var what string
		switch {
		case v.kind != vInt && v.kind != vNum && v.kind != vFrac && v.kind != vMaybeFrac:
			continue
		case v.inexact && !v.ranged && c.textArg(v.args):
			if ns.conv == 'r' {
				// The caller's text, turned into a number and passed to a
				// command, which parses it again: the caller's to get right.
				continue
			}
			what = "may be any number the caller sends, 1e15 or 0.5"
		case v.inexact && !v.ranged:
			// Past 2^53 somewhere on the way (a literal 1e16, a sum that
			// overflowed its bound): the args it involves are trouble, so
			// that the bound chosen for them shrinks.
			what = "may not be exact (past 2^53, or inf)"
		case v.ranged && (max(-v.lo, v.hi) >= limit && limit != maxExact || max(-v.lo, v.hi) > limit):
			// 1e14 is already written 1e+14; 2^53 itself is exact.
			what = "may reach " + boundText(max(-v.lo, v.hi))
		case fracOK && v.ranged && v.fbits >= 53 && v.hint != "":
			// %d of x * 0.7: the truncation of a product meant to be whole.
			what = "may land just below the integer meant, which " + ns.how + " truncates"
		case fracOK:
			continue
		case v.kind == vFrac || v.kind == vMaybeFrac && (!v.ranged || v.fbits > 0 || v.quotient):
			what, v.args = "may carry a fraction", 0 // no range rules a fraction out
		default:
			continue
		}
		c.trouble |= v.args
		msg := fmt.Sprintf("%s %s, and %s %s, which the next reader takes for another number: %s", v.what, what, ns.how, writes, fix)
		if zeroHint(v.hint) {
			msg = v.hint + ": " + v.what + ", and " + ns.how + " writes inf or nan as text"
		} else if fix := c.headerFix(v.args, overLimit(v, limit)); fix != "" {
			msg = fix + ": " + msg
		}
		c.r.errorf(ns.pos, "%s", msg)
		return
	}
}

// intTextPrefix reports whether p can begin integer text: an optional minus
// and digits.
func intTextPrefix(p string) bool {
	for i := 0; i < len(p); i++ {
		if !(p[i] >= '0' && p[i] <= '9' || i == 0 && p[i] == '-') {
			return false
		}
	}
	return true
}

// overLimit is how many times a bounded number may exceed limit, counting
// the bits of fraction it carries (each halves what a double holds
// exactly); 0 when it is not bounded or within the limit, -1 when no
// bound keeps it exact (a fraction carried through products).
func overLimit(v lval, limit float64) float64 {
	switch {
	case v.ranged && v.fbits >= 53:
		return -1
	case !v.ranged:
		return 0
	}
	limit = math.Min(limit, math.Ldexp(maxExact, -v.fbits))
	if m := math.Max(-v.lo, v.hi); m >= limit {
		return m / limit * 2 // the limit itself is too far too
	}
	return 0
}

// zeroHint reports whether hint is zeroDivisor's: the number may be inf
// or nan, which is what a message about it must say.
func zeroHint(hint string) bool { return strings.HasSuffix(hint, "("+infText+")") }
