package gen

import (
	"fmt"
	"slices"
	"strings"

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
// (see replyshape.go) and reports what does not fit the header.
func (l *linter) checkReplies(chunk []ast.Stmt) {
	sh := &shaper{l: l, memo: map[*binding]lset{}, busy: map[*binding]bool{}, steps: shaperSteps}
	w := &replyWalk{l: l, sh: sh}
	w.walk(chunk)
	c := &replyChecker{r: l.r, s: l.s, errInts: map[string]bool{}, errCodes: map[string]bool{}}
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
		return
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
			l.r.errorf(site.pos, "return false reaches the caller as a nil reply, not a bool (Redis converts Lua false to nil): return 0 for false and 1 for true")
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
}

// replyChecker compares values with the header of one script.
type replyChecker struct {
	r        *reporter
	s        *Script
	errNil   bool
	errInts  map[string]bool
	errCodes map[string]bool
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
	case v.kind == vUnknown, v.reassigned:
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
		hint := "return a string instead"
		switch {
		case e == Float64:
			hint = "return it as a string, string.format('%.17g', x): float64 decodes from a string reply, and tostring keeps only 14 digits"
		case isIntType(e) && v.inexact:
			hint = "keep it within ±2^53: check the caller's number against literals on both sides first (local n = tonumber(ARGV[1]); if n < 0 or n > 1000000 then return redis.error_reply('BAD_ARG') end, with ---@error BAD_ARG declared), or return a count the server computed (INCRBY's reply)"
		case isIntType(e):
			hint = "round it yourself (math.floor), or return string.format('%.17g', x) and declare float64"
		}
		if v.inexact && isIntType(e) {
			return []string{fmt.Sprintf("%s may not reach the caller as the integer it is: a Lua number holds integers exactly only up to 2^53 (9007199254740992), and Redis sends one beyond int64, or NaN, as -9223372036854775808, and truncates a fraction: %s", v.what, hint)}
		}
		if v.kind == vFrac {
			return []string{fmt.Sprintf("%s is not an integer, and Redis truncates a Lua number to an integer reply (3.7 → 3): %s", v.what, hint)}
		}
		return []string{fmt.Sprintf("%s may not be an integer, and Redis truncates a Lua number to an integer reply (2.5 * 1.5 → 3): %s", v.what, hint)}
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
		case isIntType(e):
			return []string{fmt.Sprintf("%s is a string, but %s decodes only an integer reply (Redis sends a Lua string as a bulk string): return tonumber(s)", v.what, name)}
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
			return Type{Shape: ShapeScalar, Elem: t.Elem, Unit: t.Unit}, "an element of " + name, true
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
				ms := c.problems(ev, et, nil, ename)
				if len(ms) > 0 && ev.kind == vStr && isIntType(et.Elem) {
					ms = []string{fmt.Sprintf("%s is a string (Redis sends bulk strings to Lua as strings, and back as bulk strings), but %s decodes only an integer reply: convert each element with tonumber in a loop, or declare a string type", ev.what, ename)}
				}
				out = append(out, ms...)
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
			if x.reassigned {
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
