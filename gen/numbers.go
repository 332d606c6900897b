package gen

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/yuin/gopher-lua/ast"
)

// Numbers: what the reply-shape analysis knows of a number's magnitude.
//
// A Lua 5.1 number is a double. It holds every integer up to 2^53 exactly,
// and a value carrying a fraction of denominator q exactly enough for its
// floor, ceil and Redis' truncation only up to 2^53/q. The analysis gives
// each number it can bound an interval (lval.lo, lval.hi) and the bits of
// fraction it may carry (lval.fbits), and calls it inexact when the
// interval reaches beyond 2^53/2^fbits. Bounds come from:
//
//   - literals;
//   - the declared type of the ---@arg a script converts to a number
//     (tonumber(ARGV[n]), or ARGV[n] in arithmetic, which Lua coerces): an
//     ---@arg range, time.Duration and time.Time by their unit (a
//     Duration holds ±2^63 ns: ±9223372036854 ms, ±9223372036 s; a Time is
//     held to the same range by the generated method), bool 0 or 1, and an
//     int64 by the bound the generated method checks (argBound);
//   - arithmetic + - * / %, math.floor, ceil, min, max and abs of bounded
//     numbers.
//
// Numbers the server computes (INCR, LLEN, ZCARD, ... replies, #x,
// tonumber of a stored value) are taken as exact integers with no bound of
// their own: in arithmetic with a bounded number they add nothing to its
// bound (INCRBY's reply - 1 is exact). The caller's text turned into a
// number (a string ---@arg) has no bound and may carry a fraction.

// Bounds of the number types, as numbers of their wire unit.
const (
	maxDurationMS = float64(math.MaxInt64 / int64(time.Millisecond)) // 9223372036854
	maxDurationS  = float64(math.MaxInt64 / int64(time.Second))      // 9223372036
	// minDefaultBound is the smallest bound the analysis picks for an
	// int64 arg without an ---@arg range (argBound); a script that needs
	// less is reported, so that its author chooses the range.
	minDefaultBound = 1 << 31
	// textExact is where Lua 5.1's tostring (%.14g) starts writing an
	// integer with an exponent: 1e14 is "1e+14".
	textExact = 1e14
)

// argBound is the bound an ---@arg holds when the script turns it into a
// number: what the generated method checks before sending (see
// Param.Check), or what the type itself guarantees.
type argBound struct {
	lo, hi   float64
	fraction bool // the value may carry a fraction (float64)
	bounded  bool // lo..hi holds it; else anything the type holds
	adaptive bool // an int64 without an ---@arg range: the analysis picks the bound
}

// typeBound returns what the declared type of p bounds, with def the bound
// for an int64 without a range.
func typeBound(p *Param, def float64) argBound {
	if r := p.Range; r != nil && r.numeric && p.Type.Elem != String && p.Type.Elem != Bytes {
		return argBound{lo: r.lo, hi: r.hi, bounded: true, fraction: p.Type.Elem == Float64}
	}
	unitMax := func(u time.Duration) float64 {
		if u == time.Second {
			return maxDurationS
		}
		return maxDurationMS
	}
	switch p.Type.Elem {
	case Int64:
		return argBound{lo: -def, hi: def, bounded: true, adaptive: true}
	case Duration, Time:
		m := unitMax(p.Type.Unit)
		return argBound{lo: -m, hi: m, bounded: true}
	case Bool:
		return argBound{lo: 0, hi: 1, bounded: true}
	case Float64:
		return argBound{fraction: true}
	}
	return argBound{fraction: true} // the caller's text: any number, or nil
}

// argNumber is the number ARGV[n] becomes in the script (n is 1-based; 0
// when the index is not known, then every arg may be meant), and records
// the conversion for the generated method's check.
func (sh *shaper) argNumber(n int, line int) lval {
	args := sh.l.s.Args
	var ps []int
	if n >= 1 && n <= len(args) {
		ps = []int{n - 1}
	} else if n >= 1 && len(args) > 0 && args[len(args)-1].Variadic {
		ps = []int{len(args) - 1}
	} else if n < 1 {
		for i := range args {
			ps = append(ps, i)
		}
	}
	what := "tonumber(ARGV[...]), the caller's number,"
	if n >= 1 {
		what = fmt.Sprintf("tonumber(ARGV[%d]), the caller's number,", n)
	}
	if len(ps) == 0 {
		return lval{kind: vNum, what: what, line: line} // undeclared: reported as such
	}
	v := lval{kind: vInt, ranged: true, lo: math.Inf(1), hi: math.Inf(-1), what: what, line: line}
	for _, i := range ps {
		sh.converted[i] = true
		b := typeBound(args[i], sh.defBound)
		if !b.bounded {
			return lval{kind: vMaybeFrac, inexact: true, what: what, line: line, args: 1 << min(i, 63), text: true}
		}
		v.lo, v.hi = math.Min(v.lo, b.lo), math.Max(v.hi, b.hi)
		if b.fraction {
			v.kind, v.fbits = vMaybeFrac, 53
		}
		v.args |= 1 << min(i, 63)
	}
	return v
}

// fracBits is how many bits of fraction the literal f (written text) may
// bring into a product: k for a binary fraction m/2^k (1.5 is 1), and 53
// for a decimal one that no double holds (0.1, 0.7): floor(90 * 0.7) is 62.
func fracBits(f float64, text string) int {
	if f == math.Trunc(f) {
		return 0
	}
	k := 0
	for g := f; g != math.Trunc(g) && k < 64; k++ {
		g *= 2
	}
	d := 0
	if i := strings.IndexByte(text, '.'); i >= 0 {
		d = len(strings.TrimRight(strings.SplitN(strings.ToLower(text[i+1:]), "e", 2)[0], "0"))
	}
	if d > 0 && k > d || k >= 53 {
		// A decimal with d digits after the point that a double holds
		// exactly is m/2^k with k <= d (10^-d is 2^-d * 5^-d); past that
		// no double holds it (0.7 is 0.6999999999999999556), a product
		// meant to be whole (90 * 0.7) may land just below the integer,
		// and floor, ceil and truncation of it are never sure.
		return 53
	}
	return k
}

// numSummary merges the values of one operand of an arithmetic operation.
type numSummary struct {
	ranged   bool // every value is bounded
	lo, hi   float64
	trusted  bool // some value is a number without a bound of its own (server-computed, unknown)
	inexact  bool // some value is a caller's number without a bound
	frac     bool // some value may carry a fraction
	certain  bool // every value is a non-integral literal
	fbits    int
	args     uint64
	text     bool // a caller's text turned into a number is among them
	quotient bool // some value is a quotient (multiply before dividing)
	lit      bool // a single literal
	hint     string
}

// numbers summarises the values of an operand, coercing the caller's
// strings as Lua arithmetic does ("10" + 1 is 11).
func (sh *shaper) numbers(vs lset, line int) numSummary {
	s := numSummary{ranged: true, lo: math.Inf(1), hi: math.Inf(-1), certain: len(vs) > 0}
	for _, v := range vs {
		if v.kind == vStr && v.argv != 0 {
			v = sh.argNumber(v.argv, line)
		}
		s.args |= v.args
		s.text = s.text || v.text
		s.quotient = s.quotient || v.quotient
		s.hint = cmp.Or(s.hint, v.hint)
		switch {
		case v.inexact && !v.ranged:
			s.inexact, s.ranged = true, false
		case v.ranged:
			s.lo, s.hi = math.Min(s.lo, v.lo), math.Max(s.hi, v.hi)
			s.fbits = max(s.fbits, v.fbits)
			s.inexact = s.inexact || v.inexact
		default:
			s.trusted, s.ranged = true, false
		}
		switch v.kind {
		case vFrac:
			s.frac = true
		case vMaybeFrac:
			s.frac, s.certain = true, false
		default:
			s.certain = false
		}
	}
	if len(vs) == 0 {
		s.ranged, s.trusted = false, true
	}
	s.lit = len(vs) == 1 && isNumLit(vs[0])
	return s
}

// interval applies op to two intervals.
func interval(op string, a, b numSummary) (lo, hi float64, ok bool) {
	switch op {
	case "+":
		return down(a.lo, b.lo), up(a.hi, b.hi), true
	case "-":
		return down(a.lo, -b.hi), up(a.hi, -b.lo), true
	case "*":
		ps := []float64{a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi}
		for i, xy := range [][2]float64{{a.lo, b.lo}, {a.lo, b.hi}, {a.hi, b.lo}, {a.hi, b.hi}} {
			// The bounds themselves are doubles: widen a rounded product
			// by one step, so that 2^52 * 2 stays 2^53 but 2^53 + 1,
			// which rounds to 2^53, is seen beyond it.
			switch e := math.FMA(xy[0], xy[1], -ps[i]); {
			case e > 0:
				ps[i] = math.Nextafter(ps[i], math.Inf(1))
			case e < 0:
				ps[i] = math.Nextafter(ps[i], math.Inf(-1))
			}
		}
		lo, hi = math.Inf(1), math.Inf(-1)
		for _, p := range ps {
			if math.IsNaN(p) {
				return 0, 0, false
			}
			lo, hi = math.Min(lo, p), math.Max(hi, p)
		}
		return lo, hi, true
	case "/":
		// An integer divisor is at least 1 in magnitude (a zero one
		// makes inf, which the script must rule out itself).
		m := math.Max(math.Abs(a.lo), math.Abs(a.hi))
		if b.lo >= 1 || b.hi <= -1 {
			ds := []float64{a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi}
			lo, hi = math.Inf(1), math.Inf(-1)
			for _, d := range ds {
				lo, hi = math.Min(lo, d), math.Max(hi, d)
			}
			return lo, hi, true
		}
		return -m, m, !b.frac
	case "%":
		m := math.Max(math.Abs(b.lo), math.Abs(b.hi))
		return -m, m, true
	}
	return 0, 0, false
}

// up and down return x + y rounded toward +inf and -inf: from 2^53 on a
// sum of bounds is itself rounded (2^53 + 1 is 2^53), and a bound must
// not shrink by it.
func up(x, y float64) float64 {
	if s, e := twoSum(x, y); e > 0 {
		return math.Nextafter(s, math.Inf(1))
	} else {
		return s
	}
}

func down(x, y float64) float64 {
	if s, e := twoSum(x, y); e < 0 {
		return math.Nextafter(s, math.Inf(-1))
	} else {
		return s
	}
}

// twoSum returns x + y rounded and the rounding error (Knuth's TwoSum).
func twoSum(x, y float64) (s, e float64) {
	s = x + y
	bv := s - x
	av := s - bv
	return s, (x - av) + (y - bv)
}

// rangedArith is the value of a op b for operands the analysis bounds (or
// server-computed ones, which add nothing to a bound). It returns false
// when it cannot bound the result.
func rangedArith(op string, a, b numSummary, what string, line int) (lval, bool) {
	if op == "^" || a.inexact || b.inexact {
		return lval{}, false
	}
	if !a.ranged && !b.ranged {
		return lval{}, false // both server-computed or unknown: trusted as before
	}
	v := lval{kind: vInt, ranged: true, what: what, line: line, args: a.args | b.args, text: a.text || b.text, hint: cmp.Or(a.hint, b.hint)}
	switch {
	case !a.ranged: // a number the server computed adds nothing to b's bound
		v.lo, v.hi, v.fbits = b.lo, b.hi, b.fbits
		if op == "-" {
			v.lo, v.hi = -b.hi, -b.lo
		}
		if op == "/" || op == "%" {
			v.lo, v.hi = -math.Max(-b.lo, b.hi), math.Max(-b.lo, b.hi)
		}
	case !b.ranged:
		v.lo, v.hi, v.fbits = a.lo, a.hi, a.fbits
		if op == "%" || op == "/" {
			m := math.Max(-a.lo, a.hi)
			v.lo, v.hi = -m, m
		}
	default:
		lo, hi, ok := interval(op, a, b)
		if !ok {
			return lval{}, false
		}
		v.lo, v.hi = lo, hi
		v.fbits = max(a.fbits, b.fbits)
	}
	frac := a.frac || b.frac
	switch op {
	case "+", "-":
		if a.fbits > 0 && b.fbits > 0 {
			v.fbits++ // one more rounding
		}
	case "*":
		switch {
		case a.quotient || b.quotient:
			v.fbits = 53 // the quotient's rounding is multiplied: divide last
		case a.lit || b.lit:
			v.fbits = a.fbits + b.fbits
		case frac:
			v.fbits = 53
		}
	case "/":
		// An integer divided by an integer: Lua rounds the quotient once,
		// and its floor (or truncation) is right while the dividend is
		// within 2^53, since the quotient is at least 1/|divisor| from
		// the next integer and its rounding error less than that.
		frac, v.quotient = true, true
		if a.frac || b.frac {
			v.fbits = 53
		} else {
			v.fbits = 0
			if math.Max(-a.lo, a.hi) > maxExact && a.ranged {
				v.inexact = true
			}
		}
	case "%":
		if a.frac || b.frac {
			frac = true
		}
		v.fbits = max(a.fbits, b.fbits)
		// Lua 5.1 computes a % b as a - floor(a/b)*b, whose product
		// reaches |a| + |b|: both must fit in 2^53 together.
		m := 0.0
		if a.ranged {
			m = math.Max(-a.lo, a.hi)
		}
		if b.ranged {
			m += math.Max(-b.lo, b.hi)
		}
		if m > maxExact {
			v.inexact = true
		}
	}
	if frac {
		v.kind = vMaybeFrac
	}
	v.inexact = v.inexact || v.overflows()
	if v.inexact {
		v.kind = vMaybeFrac // the reply checks report an inexact number as one that may not be an integer
	}
	return v, true
}

// overflows reports whether v, a bounded number, may reach beyond what a
// double holds exactly for its fraction.
func (v lval) overflows() bool {
	if !v.ranged {
		return false
	}
	m := math.Max(-v.lo, v.hi)
	return math.IsNaN(m) || v.fbits >= 53 || m > math.Ldexp(maxExact, -v.fbits)
}

// mathCall is the value of math.floor, ceil, min, max and abs.
func (sh *shaper) mathCall(name string, args []ast.Expr, line int) lset {
	what := "math." + name
	if len(args) == 0 {
		return one(lval{kind: vNum, what: what, line: line})
	}
	var ss []numSummary
	for _, a := range args {
		ss = append(ss, sh.numbers(sh.eval(a), line))
	}
	s := ss[0]
	switch name {
	case "floor", "ceil", "abs":
		if s.inexact || s.ranged && (s.fbits >= 53 || math.Max(-s.lo, s.hi) > math.Ldexp(maxExact, -s.fbits)) {
			return one(lval{kind: vMaybeFrac, inexact: true, what: what + " of a number that may not be exact", line: line, args: s.args, text: s.text,
				ranged: s.ranged, lo: s.lo, hi: s.hi, fbits: s.fbits, hint: s.hint})
		}
		kind := vInt
		if name == "abs" && s.frac {
			kind = vMaybeFrac
		}
		if !s.ranged {
			return one(lval{kind: kind, what: what, line: line})
		}
		v := lval{kind: kind, ranged: true, what: what, line: line, args: s.args, text: s.text}
		switch name {
		case "floor":
			v.lo, v.hi = math.Floor(s.lo), math.Floor(s.hi)
		case "ceil":
			v.lo, v.hi = math.Ceil(s.lo), math.Ceil(s.hi)
		default:
			v.lo, v.hi, v.fbits = math.Max(0, s.lo), math.Max(-s.lo, s.hi), s.fbits
		}
		return one(v)
	case "min", "max":
		v := lval{kind: vInt, ranged: true, what: what, line: line, lo: s.lo, hi: s.hi}
		for i, t := range ss {
			v.args |= t.args
			v.text = v.text || t.text
			if t.inexact {
				return one(lval{kind: vMaybeFrac, inexact: true, what: what, line: line, args: v.args, text: v.text, hint: t.hint})
			}
			if !t.ranged {
				v.ranged = false
				continue
			}
			if t.frac {
				v.kind = vMaybeFrac
				v.fbits = max(v.fbits, t.fbits)
			}
			if i > 0 && name == "min" {
				v.lo, v.hi = math.Min(v.lo, t.lo), math.Min(v.hi, t.hi)
			} else if i > 0 {
				v.lo, v.hi = math.Max(v.lo, t.lo), math.Max(v.hi, t.hi)
			}
		}
		if !v.ranged {
			return one(lval{kind: v.kind, what: what, line: line})
		}
		return one(v)
	case "pow", "ldexp", "exp":
		// Like ^: a power of the caller's number leaves any bound the
		// analysis could check (math.pow(43, 10) is past 2^53).
		for _, t := range ss {
			if t.ranged || t.inexact {
				return one(lval{kind: vMaybeFrac, inexact: true, what: what + " of the caller's number", line: line, args: t.args, text: t.text})
			}
		}
	case "fmod", "modf":
		// fmod(a, b) is exact, within |a|; modf's first value is a's
		// integral part. fmod(a, 0) is nan, as a % 0 is.
		if name == "fmod" && len(args) > 1 {
			if hint := sh.zeroDivisor(nil, args[1], sh.eval(args[1]), line); hint != "" {
				return one(lval{kind: vMaybeFrac, inexact: true, what: what + " by a caller's number that may be 0", line: line, hint: hint})
			}
		}
		if s.inexact {
			return one(lval{kind: vMaybeFrac, inexact: true, what: what + " of a number that may not be exact", line: line, args: s.args, text: s.text, hint: s.hint})
		}
		if !s.ranged {
			return one(lval{kind: vNum, what: what, line: line})
		}
		m := math.Max(-s.lo, s.hi)
		v := lval{kind: vInt, ranged: true, lo: -m, hi: m, what: what, line: line, args: s.args, text: s.text}
		if name == "fmod" {
			v.fbits = s.fbits
			for _, t := range ss[1:] {
				v.args |= t.args
				if t.frac {
					v.fbits = max(v.fbits, t.fbits)
					v.kind = vMaybeFrac
				}
			}
			if s.frac {
				v.kind = vMaybeFrac
			}
		}
		return one(v)
	case "random":
		// math.random(m) is 1..m, random(m, n) m..n (integers).
		lo, hi := 1.0, 0.0
		var args uint64
		switch len(ss) {
		case 1:
			lo, hi, args = 1, ss[0].hi, ss[0].args
		case 2:
			lo, hi, args = ss[0].lo, ss[1].hi, ss[0].args|ss[1].args
		}
		for _, t := range ss {
			if t.inexact {
				return one(lval{kind: vMaybeFrac, inexact: true, what: what + " of a number that may not be exact", line: line, args: t.args, text: t.text})
			}
			if !t.ranged {
				return one(lval{kind: vNum, what: what, line: line})
			}
		}
		return one(lval{kind: vInt, ranged: true, lo: lo, hi: hi, what: what, line: line, args: args})
	case "sqrt":
		if s.inexact || !s.ranged {
			break
		}
		return one(lval{kind: vMaybeFrac, ranged: true, lo: 0, hi: math.Sqrt(math.Max(s.hi, 0)), fbits: 53, what: what, line: line, args: s.args, text: s.text})
	}
	for _, t := range ss {
		if t.args != 0 {
			// Another function of the caller's number (math.sin, math.log,
			// math.deg, ...): nothing bounds what it gives.
			return one(lval{kind: vMaybeFrac, inexact: true, what: what + " of the caller's number", line: line, args: t.args, text: t.text})
		}
	}
	return one(lval{kind: vNum, what: what, line: line})
}

// boundText writes a bound for a message: a power of two as 2^k (and
// its digits), a large number with an exponent.
func boundText(f float64) string {
	if f > 0 && f == math.Trunc(f) && f < 1<<63 {
		if u := uint64(f); u&(u-1) == 0 {
			return fmt.Sprintf("2^%d (%d)", bits.TrailingZeros64(u), u)
		}
	}
	if f >= 1e17 {
		return strconv.FormatFloat(f, 'g', 4, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// String writes the range as the header does: "[lo,hi]" or "{a|b}".
func (r *ArgRange) String() string {
	switch {
	case r == nil:
		return ""
	case r.Text != "":
		return r.Text
	case r.oneOf != nil:
		return "{" + strings.Join(r.oneOf, "|") + "}"
	}
	return "[" + strconv.FormatFloat(r.lo, 'f', -1, 64) + "," + strconv.FormatFloat(r.hi, 'f', -1, 64) + "]"
}

// infText ends zeroDivisor's hint: what a division by 0 sends, and how
// the message about such a number knows it (zeroHint).
const infText = "x / 0 is inf, which Redis replies as -9223372036854775808 and tostring writes \"inf\""

// zeroDivisor returns the header fix for a divisor e (its values vs) that
// is the caller's number and may be 0: x / 0 is inf or nan in Lua, which
// Redis replies as -9223372036854775808 and tostring writes "inf", "nan"
// or "-nan". A divisor the analysis trusts (a count the server returns)
// or cannot see is left alone, as everywhere, and so is a local an if
// rules out (if n <= 0 then return end, wherever it stands; or a
// division under if n > 0 then, for a local assigned once).
// It returns "" when the divisor cannot be 0.
func (sh *shaper) zeroDivisor(div *ast.ArithmeticOpExpr, e ast.Expr, vs lset, line int) string {
	d := sh.numbers(sh.coerce(vs, line), line)
	if d.args == 0 || d.ranged && (d.lo > 0 || d.hi < 0) {
		return "" // no caller's number, or one whose bound rules 0 out
	}
	if id, ok := e.(*ast.IdentExpr); ok {
		if b := sh.l.resolved[id]; b != nil && sh.l.once(b) && (sh.l.zeroChecked[b] || guardedNonZero(sh.l, sh.l.divGuards[div], b)) {
			return ""
		}
	}
	for i, p := range sh.l.s.Args {
		if i > 63 || d.args&(1<<i) == 0 || p.Name == "" {
			continue
		}
		lo, hi := "1", "1000000"
		if r := p.Range; r != nil && r.numeric && p.Type.Elem != String && p.Type.Elem != Bytes {
			switch {
			case r.lo == 0 && r.hi >= 1:
				hi = strconv.FormatFloat(r.hi, 'f', -1, 64)
			case r.hi == 0 && r.lo <= -1:
				lo, hi = strconv.FormatFloat(r.lo, 'f', -1, 64), "-1"
			}
		}
		typ := typeString(&Return{Type: p.Type})
		if p.Type.Elem == String || p.Type.Elem == Bytes || p.Type.Elem == Bool {
			typ = "int64"
		}
		if p.Type.Elem.needsUnit() {
			typ += " " + map[bool]string{true: "s", false: "ms"}[p.Type.Unit == time.Second]
		}
		return fmt.Sprintf("give %s a range without 0, e.g. ---@arg %s %s [%s,%s] %s, or compare it with 0 before dividing (%s)", p.Name, p.Name, typ, lo, hi, cmp.Or(p.Desc, "description"), infText)
	}
	return ""
}

// forVar is the value of the variable of a numeric for: between the
// loop's start and its limit (for i = s, s + c - 1 takes the caller's s
// and c with it), carrying a fraction when the step is not an integer
// literal. Start and limit the analysis trusts (a count) give a trusted
// number, as before.
func (sh *shaper) forVar(b *binding, f *ast.NumberForStmt) lset {
	if sh.busy[b] {
		return nil
	}
	sh.busy[b] = true
	sh.depth++
	line := f.Line()
	vals := append(slices.Clone(sh.eval(f.Init)), sh.eval(f.Limit)...)
	fracStep := false
	if f.Step != nil {
		n, ok := f.Step.(*ast.NumberExpr)
		if u, neg := f.Step.(*ast.UnaryMinusOpExpr); neg {
			n, ok = u.Expr.(*ast.NumberExpr)
		}
		v, isNum := 0.0, false
		if ok {
			v, isNum = luaNumber(n.Value)
		}
		fracStep = !isNum || v != math.Trunc(v)
	}
	sh.depth--
	sh.busy[b] = false
	s := sh.numbers(sh.coerce(vals, line), line)
	what := "the loop variable " + b.name
	switch {
	case !s.ranged && s.inexact:
		return one(lval{kind: vMaybeFrac, inexact: true, what: what, line: line, args: s.args, text: s.text, hint: s.hint})
	case !s.ranged:
		return one(lval{kind: vNum, what: what, line: line})
	}
	v := lval{kind: vInt, ranged: true, lo: s.lo, hi: s.hi, fbits: s.fbits, what: what, line: line, args: s.args, text: s.text, inexact: s.inexact, hint: s.hint}
	if s.frac || fracStep || s.inexact {
		v.kind = vMaybeFrac
		if fracStep {
			v.fbits = 53
		}
	}
	return one(v)
}
