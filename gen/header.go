package gen

import (
	"errors"
	"fmt"
	"math"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// tags are the header tags luagen knows, in the order the manual lists them.
var tags = []string{"@script", "@keys", "@key", "@arg", "@elem", "@unused", "@return", "@field", "@error", "@status", "@idempotent", "@unsafe-keys", "@coalesce", "@include"}

// tagAliases suggests luagen's tag for tags other annotation dialects use.
var tagAliases = map[string]string{
	"@param": "@arg", "@argv": "@arg", "@returns": "@return",
	"@ret": "@return", "@err": "@error", "@name": "@script", "@unsafe": "@unsafe-keys",
	"@retry": "@idempotent", "@retryable": "@idempotent", "@import": "@include", "@require": "@include",
}

// typeAliases suggests a type for names people reach for from other languages.
var typeAliases = map[string]string{
	"int": "int64", "integer": "int64", "int32": "int64", "long": "int64", "number": "int64",
	"float": "float64", "double": "float64", "float32": "float64",
	"boolean": "bool", "str": "string", "bytes": "[]byte", "[]uint8": "[]byte",
	"duration": "time.Duration", "time": "time.Time", "timestamp": "time.Time",
	"map": "map[string]string", "table": "map[string]string", "hash": "map[string]string",
	"array": "[]string", "list": "[]string", "ok": "status",
	"void": "none", "nothing": "none",
}

// unitWords are tokens that were clearly meant as a unit, so an unknown one
// is reported as a bad unit rather than taken as the description.
var unitWords = map[string]bool{
	"ns": true, "us": true, "µs": true, "m": true, "h": true, "sec": true, "secs": true,
	"second": true, "seconds": true, "msec": true, "msecs": true, "millis": true,
	"millisecond": true, "milliseconds": true, "min": true, "mins": true, "minute": true,
	"minutes": true, "MS": true, "S": true, "Ms": true,
}

var scalarByName = map[string]Scalar{
	"string": String, "[]byte": Bytes, "int64": Int64, "float64": Float64,
	"bool": Bool, "time.Duration": Duration, "time.Time": Time,
}

const scalarList = "string, []byte, int64, float64, bool, time.Duration, time.Time"

// word is one whitespace-separated token of a header line with its 1-based
// column.
type word struct {
	s   string
	col int
}

func splitWords(line string) []word {
	var ws []word
	for i := 0; i < len(line); {
		if line[i] == ' ' || line[i] == '\t' {
			i++
			continue
		}
		j := i
		for j < len(line) && line[j] != ' ' && line[j] != '\t' {
			j++
		}
		ws = append(ws, word{line[i:j], i + 1})
		i = j
	}
	return ws
}

// headerParser holds the state of parsing one header block.
type headerParser struct {
	r       *reporter
	s       *Script
	line    string // the current line
	lineNo  int
	seen    map[string]Pos // "@script", "@return" → first position
	tuple   *Return        // the last ---@return tuple, for ---@field
	names   map[string]Pos // "key stock", "arg qty", "field ttl", "reply OutOfStock", "value -1"
	hasBody bool
}

func (p *headerParser) pos(col int) Pos { return Pos{p.lineNo, col} }

// desc returns the rest of the line from word i on, or "".
func (p *headerParser) desc(ws []word, i int) string {
	if i >= len(ws) {
		return ""
	}
	return strings.TrimSpace(p.line[ws[i].col-1:])
}

// parseHeader reads the header block: every line from the top (after the
// shebang) that is blank or starts with "---". It returns the index of the
// first line after the header.
func parseHeader(r *reporter, s *Script, lines []string) int {
	p := &headerParser{r: r, s: s, seen: map[string]Pos{}, names: map[string]Pos{}}
	i := 0
	if len(lines) > 0 && strings.HasPrefix(lines[0], "#!") {
		parseShebang(r, s, lines[0])
		i = 1
	}
	for ; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimLeft(line, " \t")
		indent := len(line) - len(trimmed)
		switch {
		case trimmed == "":
			if len(s.Doc) > 0 && s.Doc[len(s.Doc)-1] != "" {
				s.Doc = append(s.Doc, "") // a blank line ends a doc paragraph
			}
			continue
		case strings.HasPrefix(trimmed, "#!") && i == 0:
			r.errorf(Pos{1, indent + 1}, "the shebang must start the file: Redis reads #! only as its first two bytes, and Lua fails to compile it anywhere else")
			continue
		case strings.HasPrefix(trimmed, "#!"):
			r.errorf(Pos{i + 1, indent + 1}, "the shebang must be on line 1: Redis reads flags only there and fails to compile a script with #! anywhere else")
			continue
		case !strings.HasPrefix(trimmed, "---"):
			p.finish()
			return i
		}
		p.line, p.lineNo = line, i+1
		p.checkText()
		rest := trimmed[3:]
		if strings.HasPrefix(rest, "@") {
			p.tag(indent + 4)
			continue
		}
		rest = strings.TrimPrefix(rest, " ")
		if strings.TrimSpace(rest) == "" {
			if len(s.Doc) > 0 && s.Doc[len(s.Doc)-1] != "" {
				s.Doc = append(s.Doc, "")
			}
			continue
		}
		if strings.Trim(rest, "-") == "" {
			continue // a ------ rule
		}
		if reIncludeLine.MatchString(trimmed) {
			continue // BullMQ's "--- @include": see scanIncludes
		}
		if at, tag := misspelledTag(trimmed); tag != "" {
			r.errorf(Pos{i + 1, indent + at + 1}, "%q is doc text: write \"---%s\" (no space) to declare a tag", trimmed[:at+len(tag)], tag)
			s.meant(tag)
			continue
		}
		s.Doc = append(s.Doc, strings.TrimRight(rest, " \t"))
	}
	p.finish()
	return len(lines)
}

// misspelledTag finds a known tag that a comment line meant to declare
// but that Lua and luagen read as text: "--- @arg" (doc text), "--@arg" and
// "-- @arg" (plain comments). It returns the index of the '@' in line
// (which starts with "--") and the tag, or "" when the text after the dashes
// and spaces does not start with a known tag, so prose that merely holds an
// '@' is left alone.
func misspelledTag(line string) (int, string) {
	text := strings.TrimLeft(line, "-")
	text = strings.TrimLeft(text, " \t")
	if !strings.HasPrefix(text, "@") {
		return 0, ""
	}
	at := len(line) - len(text)
	if strings.HasPrefix(line, "---@") {
		return 0, "" // a real tag
	}
	end := strings.IndexAny(text, " \t")
	if end < 0 {
		end = len(text)
	}
	if !slices.Contains(tags, text[:end]) {
		return 0, ""
	}
	return at, text[:end]
}

func (p *headerParser) finish() {
	for len(p.s.Doc) > 0 && p.s.Doc[len(p.s.Doc)-1] == "" {
		p.s.Doc = p.s.Doc[:len(p.s.Doc)-1]
	}
	if t := p.tuple; t != nil && len(t.Fields) == 0 && !p.s.mayLack("@field") {
		p.r.errorf(t.Pos, "tuple %s has no fields: list them with ---@field name type description lines after the ---@return", t.Tuple)
	}
	if len(p.s.Statuses) > 0 && p.s.Return == nil && !p.s.mayLack("@return") {
		p.r.errorf(p.s.Statuses[0].ValuePos, "---@status names a reply value, but the header has no ---@return: declare ---@return int64 or ---@return string")
	}
}

// checkText reports the first byte of the current line that a Go comment
// cannot hold: header text (doc lines, descriptions, status values) is
// copied into the generated comments.
func (p *headerParser) checkText() {
	for i := 0; i < len(p.line); {
		r, n := utf8.DecodeRuneInString(p.line[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			p.r.errorf(p.pos(i+1), "the header is not valid UTF-8 (byte %#x); its text is copied into Go comments, which must be UTF-8: save the file as UTF-8", p.line[i])
			return
		case r == 0:
			p.r.errorf(p.pos(i+1), "the header holds a NUL byte; its text is copied into Go comments, where Go does not allow it")
			return
		case r == '\ufeff':
			p.r.errorf(p.pos(i+1), "the header holds a byte order mark (U+FEFF); its text is copied into Go comments, where Go does not allow it")
			return
		}
		i += n
	}
}

// tag parses a "---@tag ..." line; col is the column of the '@'.
func (p *headerParser) tag(col int) {
	ws := splitWords(p.line[col-1:])
	for i := range ws {
		ws[i].col += col - 1
	}
	name := ws[0].s
	p.s.tagged = true
	switch name {
	case "@script":
		p.script(ws)
	case "@keys":
		p.keysFamily(ws)
	case "@key":
		p.param(ws, &p.s.Keys, "key")
	case "@arg":
		p.param(ws, &p.s.Args, "arg")
	case "@return":
		p.ret(ws)
	case "@field":
		p.field(ws)
	case "@error":
		p.reply(ws, &p.s.Errors, "error")
	case "@status":
		p.reply(ws, &p.s.Statuses, "status")
	case "@idempotent":
		if !p.once(ws[0]) {
			return
		}
		if len(ws) < 2 {
			p.r.errorf(p.pos(ws[0].col), "---@idempotent needs a reason: say why running the script twice with the same KEYS and ARGV does what running it once does (it makes calls retried after connection errors)")
		}
		p.s.Idempotent = p.desc(ws, 1)
		p.s.IdempotentPos = p.pos(ws[0].col)
	case "@coalesce":
		p.coalesce(ws)
	case "@elem":
		p.elem(ws)
	case "@unused":
		if len(ws) < 3 {
			p.r.errorf(p.pos(ws[0].col), "malformed ---@unused: want ---@unused name reason, naming a declared key or arg the script keeps for its callers without reading it, and why")
			return
		}
		if !p.declare("unused", ws[1].s, p.pos(ws[1].col), "---@unused "+ws[1].s) {
			return
		}
		p.s.Unused = append(p.s.Unused, &Unused{Name: ws[1].s, Reason: p.desc(ws, 2), Pos: p.pos(ws[1].col)})
	case "@include":
		// scanIncludes takes include lines wherever they stand.
	case "@unsafe-keys":
		if !p.once(ws[0]) {
			return
		}
		if len(ws) < 2 {
			p.r.errorf(p.pos(ws[0].col), "---@unsafe-keys needs a reason: say why this script may touch keys it does not receive in KEYS")
		}
		p.s.UnsafeKeys = p.desc(ws, 1)
		p.s.UnsafeKeysPos = p.pos(ws[0].col)
	default:
		meant := tagAliases[name]
		if meant == "" {
			meant = closest(name, tags)
		}
		if meant != "" {
			p.r.errorf(p.pos(ws[0].col), "unknown tag %q; did you mean %q?", name, meant)
			p.s.meant(meant)
		} else {
			p.r.errorf(p.pos(ws[0].col), "unknown tag %q; known tags are %s", name, strings.Join(tags, ", "))
			for _, t := range tags {
				p.s.meant(t)
			}
		}
	}
}

// reElem matches the target of an ---@elem line: arg[N].
var reElem = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\[([1-9][0-9]{0,5})\]$`)

// elem parses "---@elem arg[N] name {tag}suffix desc": element N of a
// declared arg the script decodes is laid out in a key family.
func (p *headerParser) elem(ws []word) {
	if len(ws) < 4 || !isTemplate(ws[3].s) {
		p.r.errorf(p.pos(ws[0].col), "malformed ---@elem: want ---@elem arg[N] name {tag}suffix description, e.g. ---@elem args[1] prefix {queue}: for the key prefix in element 1 of args (local args = cmsgpack.unpack(ARGV[1]))")
		return
	}
	m := reElem.FindStringSubmatch(ws[1].s)
	if m == nil {
		p.r.errorf(p.pos(ws[1].col), "malformed ---@elem: %q is not arg[N], an arg's name and an element's index from 1", ws[1].s)
		return
	}
	idx, _ := strconv.Atoi(m[2])
	var arg *Param
	for _, a := range p.s.Args {
		if a.Name == m[1] {
			arg = a
		}
	}
	if arg == nil {
		p.r.errorf(p.pos(ws[1].col), "---@elem %s: no ---@arg %s is declared above it", ws[1].s, m[1])
		return
	}
	if arg.Template != nil || arg.Type.Elem != String && arg.Type.Elem != Bytes {
		p.r.errorf(p.pos(ws[1].col), "---@elem %s: arg %s is not a string or []byte the script decodes (cmsgpack.unpack or cjson.decode)", ws[1].s, m[1])
		return
	}
	name, _, ok := p.paramName("@elem", ws[2], "its element")
	if !ok {
		return
	}
	goName, ok := p.goName("@elem", ws[2], name)
	if !ok {
		return
	}
	e := &Elem{Arg: m[1], Index: idx, Param: Param{Name: name, GoName: goName, Pos: p.pos(ws[2].col), Type: Type{Shape: ShapeScalar, Elem: String}, Desc: p.desc(ws, 4)}}
	if !p.declare("elem", ws[1].s, p.pos(ws[1].col), "---@elem "+ws[1].s) {
		return
	}
	if e.Template = p.keyTemplate(ws[3], &e.Param); e.Template == nil {
		return
	}
	p.s.Elems = append(p.s.Elems, e)
}

// once reports a repeated single-use tag and returns false for it.
func (p *headerParser) once(w word) bool {
	if first, ok := p.seen[w.s]; ok {
		p.r.errorf(p.pos(w.col), "duplicate ---%s (first at line %d): a script has one", w.s, first.Line)
		return false
	}
	p.seen[w.s] = p.pos(w.col)
	return true
}

func (p *headerParser) script(ws []word) {
	if !p.once(ws[0]) {
		return
	}
	if len(ws) < 2 {
		p.r.errorf(p.pos(ws[0].col), "malformed ---@script: want ---@script Name")
		return
	}
	if len(ws) > 2 {
		p.r.errorf(p.pos(ws[2].col), "malformed ---@script: unexpected %q after the name; the doc comment goes on plain --- lines", ws[2].s)
	}
	if !isExported(ws[1].s) {
		p.r.errorf(p.pos(ws[1].col), "script name %q is not an exported Go identifier (try %q)", ws[1].s, pascal(ws[1].s))
		return
	}
	p.s.Name, p.s.NamePos = ws[1].s, p.pos(ws[1].col)
}

// declare records a name in a namespace ("key", "arg", "field", ...) and
// reports a duplicate; it returns false for one.
func (p *headerParser) declare(ns, name string, at Pos, what string) bool {
	k := ns + " " + name
	if first, ok := p.names[k]; ok {
		p.r.errorf(at, "duplicate %s (first at line %d)", what, first.Line)
		return false
	}
	p.names[k] = at
	return true
}

// goName returns the Go spelling of an annotation name (see [pascal]) and
// reports a name that has none: "_" has no letters, and "_2fa" would start
// with a digit once the _ is dropped.
func (p *headerParser) goName(tag string, w word, name string) (string, bool) {
	g := pascal(name)
	switch {
	case g == "":
		p.r.errorf(p.pos(w.col), "---%s name %q has no Go spelling: the Go name drops '_' and keeps letters and digits; use a letter", tag, name)
		return "", false
	case !isIdent(g):
		p.r.errorf(p.pos(w.col), "---%s name %q has no Go spelling: its Go name %s would start with a digit; start the name with a letter", tag, name, g)
		return "", false
	}
	return g, true
}

// paramName reads "name" or "...name" from w.
func (p *headerParser) paramName(tag string, w word, kind string) (name string, variadic bool, ok bool) {
	name = w.s
	if strings.HasPrefix(name, "...") {
		name, variadic = name[3:], true
	}
	if !isLuaName(name) {
		p.r.errorf(p.pos(w.col), "malformed ---%s: %q is not a name (letters, digits and _; \"...name\" for the rest of %s)", tag, w.s, kind)
		return "", false, false
	}
	return name, variadic, true
}

func (p *headerParser) param(ws []word, list *[]*Param, kind string) {
	tag, wire := ws[0].s, "KEYS"
	if kind == "arg" {
		wire = "ARGV"
	}
	slot := &Param{Variadic: len(ws) > 1 && strings.HasPrefix(ws[1].s, "..."), Pos: p.pos(ws[0].col)}
	defer func() {
		if kind == "key" {
			p.s.keySlots = append(p.s.keySlots, slot)
		} else {
			p.s.argSlots = append(p.s.argSlots, slot)
		}
	}()
	if len(ws) < 2 {
		if kind == "key" {
			p.r.errorf(p.pos(ws[0].col), "malformed ---@key: want ---@key name description")
		} else {
			p.r.errorf(p.pos(ws[0].col), "malformed ---@arg: want ---@arg name type description")
		}
		return
	}
	name, variadic, named := p.paramName(tag, ws[1], wire)
	if !named {
		return
	}
	at := p.pos(ws[1].col)
	slot.Name, slot.Pos = name, at
	goName, spelled := p.goName(tag, ws[1], name)
	if !spelled {
		return
	}
	prm := &Param{Name: name, GoName: goName, Variadic: variadic, Pos: at, Type: Type{Shape: ShapeScalar, Elem: String}}
	next := 2
	if kind == "key" && len(ws) > 2 && isTemplate(ws[2].s) {
		prm.Template = p.keyTemplate(ws[2], prm)
		next = 3
	}
	if kind == "arg" && len(ws) > 2 && isTemplate(ws[2].s) {
		// A key prefix the script appends to: a string laid out in its
		// family, so that keys built from it share the family's slot.
		prm.Template = p.keyTemplate(ws[2], prm)
		next = 3
		if variadic {
			p.r.errorf(p.pos(ws[2].col), "---@arg ...%s: a key prefix (an arg with a key template) is one string; declare it before the variadic arg", name)
		}
	} else if kind == "arg" {
		if len(ws) < 3 {
			p.r.errorf(p.pos(ws[1].col+len(ws[1].s)), "---@arg %s needs a type: one of %s", name, scalarList)
			return
		}
		t, n, typed := p.parseType(ws, 2, false)
		if !typed {
			return
		}
		if t.Shape != ShapeScalar {
			p.r.errorf(p.pos(ws[2].col), "---@arg type must be a scalar (%s); for a list of values declare the last arg variadic: ---@arg ...%s %s", scalarList, name, elemName(t))
			return
		}
		prm.Type, next = t, n
		if next < len(ws) && (strings.HasPrefix(ws[next].s, "[") || strings.HasPrefix(ws[next].s, "{")) {
			r, n, ok := p.argRange(ws, next, prm)
			if !ok {
				return
			}
			prm.Range, next = r, n
		}
	}
	prm.Desc = p.desc(ws, next)
	if n := len(*list); n > 0 && (*list)[n-1].Variadic {
		last := (*list)[n-1]
		p.r.errorf(at, "%s %q follows the variadic ...%s (line %d); only the last %s can be variadic", kind, name, last.Name, last.Pos.Line, kind)
		return
	}
	if !p.declare(kind, name, at, fmt.Sprintf("%s %q", kind, name)) ||
		!p.declare(kind+"-go", prm.GoName, at, fmt.Sprintf("%s %q: its Go name %s is taken", kind, name, prm.GoName)) {
		return
	}
	*list = append(*list, prm)
	slot = prm
}

// argRange reads the constraint of an ---@arg line at ws[i], after the
// type: [lo,hi] (either side may be empty: the type's own limit) for
// int64, float64, time.Duration and time.Time (in the wire unit) and for
// the length in bytes of a string or []byte, or {a|b|c} for a string. It
// returns the index of the first word after it.
func (p *headerParser) argRange(ws []word, i int, prm *Param) (*ArgRange, int, bool) {
	open, close := ws[i].s[:1], "]"
	if open == "{" {
		close = "}"
	}
	j := i
	for j < len(ws) && !strings.HasSuffix(ws[j].s, close) {
		j++
	}
	at := p.pos(ws[i].col)
	if j == len(ws) {
		p.r.errorf(at, "---@arg %s: the range %s is not closed with %s: write [lo,hi] (either may be left out) or, for a string, {a|b|c}", prm.Name, ws[i].s, close)
		return nil, 0, false
	}
	text := strings.TrimSpace(p.line[ws[i].col-1 : ws[j].col-1+len(ws[j].s)])
	r := &ArgRange{Text: text, Pos: at}
	inner := strings.TrimSpace(text[1 : len(text)-1])
	e := prm.Type.Elem
	switch {
	case prm.Variadic && e != Int64:
		p.r.errorf(at, "---@arg ...%s: a range on a variadic arg is for int64 only (each element is checked)", prm.Name)
		return nil, 0, false
	case open == "{":
		if e != String {
			p.r.errorf(at, "---@arg %s: a set of values {a|b} is for a string arg; for %s write a range [lo,hi]", prm.Name, e)
			return nil, 0, false
		}
		r.oneOf = strings.Split(inner, "|")
		for k := range r.oneOf {
			r.oneOf[k] = strings.TrimSpace(r.oneOf[k])
		}
		return r, j + 1, true
	case e == Bool:
		p.r.errorf(at, "---@arg %s: a bool is 1 or 0; it takes no range", prm.Name)
		return nil, 0, false
	}
	lo, hi, ok := strings.Cut(inner, ",")
	if !ok {
		p.r.errorf(at, "---@arg %s: malformed range %s: want [lo,hi], e.g. [1,1000] (either may be left out: [1,])", prm.Name, text)
		return nil, 0, false
	}
	r.numeric = true
	// An int64's open side is ±2^53, what a Lua number holds exactly, so
	// that [1,] still bounds the arithmetic the analysis checks.
	limit := map[Scalar]float64{Int64: maxExact, Float64: math.MaxFloat64, Duration: maxDurationMS, Time: maxDurationMS, String: math.MaxInt32, Bytes: math.MaxInt32}[e]
	if prm.Type.Unit == time.Second {
		limit = maxDurationS
	}
	r.lo, r.hi = -limit, limit
	if e == String || e == Bytes {
		r.lo = 0
	}
	for k, side := range []string{strings.TrimSpace(lo), strings.TrimSpace(hi)} {
		if side == "" {
			continue
		}
		var v float64
		var err error
		if e == Float64 {
			v, err = strconv.ParseFloat(side, 64)
			if err == nil && math.IsNaN(v) {
				err = errors.New("NaN bounds nothing")
			}
		} else {
			var n int64
			n, err = strconv.ParseInt(side, 10, 64)
			v = float64(n)
			if err == nil && (n > maxExact || n < -maxExact) {
				err = errors.New("beyond 2^53")
			}
		}
		if err != nil || v < -limit || v > limit || (e == String || e == Bytes) && v < 0 {
			p.r.errorf(at, "---@arg %s: %q in %s is not a bound of %s: want an integer (a number for float64) within what the type holds and, for an int64, within ±2^53", prm.Name, side, text, e)
			return nil, 0, false
		}
		if k == 0 {
			r.lo = v
		} else {
			r.hi = v
		}
	}
	if r.lo > r.hi {
		p.r.errorf(at, "---@arg %s: the range %s is empty: its low end is above its high end", prm.Name, text)
		return nil, 0, false
	}
	return r, j + 1, true
}

func elemName(t Type) string {
	if t.Elem == 0 {
		return "string"
	}
	return t.Elem.String()
}

// parseType reads the type at ws[i] and, for Duration and Time, the unit
// after it. ret allows the reply shapes (T?, []T, map, status). It returns
// the index of the first word after the type.
func (p *headerParser) parseType(ws []word, i int, ret bool) (t Type, next int, ok bool) {
	w := ws[i]
	tok := w.s
	switch {
	case tok == "status" && ret:
		return Type{Shape: ShapeStatus}, i + 1, true
	case tok == "none" && ret:
		return Type{Shape: ShapeDiscard}, i + 1, true
	case tok == "map[string]string" && ret:
		return Type{Shape: ShapeMap}, i + 1, true
	case strings.HasSuffix(tok, "?") && ret:
		t.Shape, tok = ShapeOptional, strings.TrimSuffix(tok, "?")
	case strings.HasPrefix(tok, "[]") && tok != "[]byte" && ret:
		t.Shape, tok = ShapeSlice, tok[2:]
	default:
		t.Shape = ShapeScalar
	}
	elem, ok := scalarByName[tok]
	if !ok {
		p.unknownType(w, ret)
		return t, 0, false
	}
	t.Elem = elem
	i++
	defer func() {
		// ---@return int64 truncated, []int64 truncated, time.Duration ms
		// truncated: Redis' truncation of a fraction is meant.
		if ret && isIntType(elem) && next > 0 && next < len(ws) && ws[next].s == "truncated" {
			t.Truncated = true
			next++
		}
	}()
	if !elem.needsUnit() {
		return t, i, true
	}
	if i >= len(ws) || (ws[i].s != "ms" && ws[i].s != "s") {
		at := p.pos(w.col + len(w.s))
		if i < len(ws) && unitWords[ws[i].s] {
			p.r.errorf(p.pos(ws[i].col), "unknown unit %q for %s: use ms or s", ws[i].s, elem)
		} else {
			p.r.errorf(at, "%s needs a unit right after the type: ms or s (e.g. %s ms)", elem, w.s)
		}
		return t, 0, false
	}
	if ws[i].s == "ms" {
		t.Unit = time.Millisecond
	} else {
		t.Unit = time.Second
	}
	return t, i + 1, true
}

func (p *headerParser) unknownType(w word, ret bool) {
	if ret {
		base := strings.TrimSuffix(strings.TrimPrefix(w.s, "[]"), "?")
		compound := base == "tuple" || base == "status" || base == "none" || base == "map[string]string"
		switch {
		case w.s == "tuple":
			p.r.errorf(p.pos(w.col), "tuples do not nest: a ---@field is one element of the reply, of type %s, T?, []T or map[string]string", scalarList)
			return
		case compound && base != w.s:
			p.r.errorf(p.pos(w.col), "unsupported type %q: []T and T? take a scalar T (%s), not %s", w.s, scalarList, base)
			return
		}
	}
	known := scalarList
	if ret {
		known += ", T?, []T, map[string]string, status, none, tuple Name"
	}
	base := strings.TrimSuffix(strings.TrimPrefix(w.s, "[]"), "?")
	sugg := typeAliases[strings.ToLower(w.s)]
	if sugg == "" {
		if s := typeAliases[strings.ToLower(base)]; s != "" && base != w.s {
			sugg = strings.Replace(w.s, base, s, 1)
		}
	}
	if sugg == "" {
		cands := []string{"string", "[]byte", "int64", "float64", "bool", "time.Duration", "time.Time"}
		if ret {
			cands = append(cands, "status", "none", "tuple", "map[string]string")
		}
		if s := closest(base, cands); s != "" {
			sugg = strings.Replace(w.s, base, s, 1)
		}
	}
	if !ret && (strings.HasSuffix(w.s, "?") || strings.HasPrefix(w.s, "[]") && w.s != "[]byte") {
		p.r.errorf(p.pos(w.col), "unsupported arg type %q: args are scalars (%s); \"...name\" takes the rest of ARGV", w.s, scalarList)
		return
	}
	if sugg != "" && sugg != w.s {
		p.r.errorf(p.pos(w.col), "unknown type %q; did you mean %q?", w.s, sugg)
		return
	}
	p.r.errorf(p.pos(w.col), "unknown type %q; known types are %s", w.s, known)
}

func (p *headerParser) ret(ws []word) {
	if !p.once(ws[0]) {
		return
	}
	if len(ws) < 2 {
		p.r.errorf(p.pos(ws[0].col), "malformed ---@return: want ---@return type description")
		return
	}
	if ws[1].s == "tuple" {
		if len(ws) < 3 {
			p.r.errorf(p.pos(ws[1].col), "malformed ---@return tuple: want ---@return tuple Name description")
			return
		}
		if !isExported(ws[2].s) {
			p.r.errorf(p.pos(ws[2].col), "tuple name %q is not an exported Go identifier (try %q)", ws[2].s, pascal(ws[2].s))
			return
		}
		p.tuple = &Return{Type: Type{Shape: ShapeTuple}, Tuple: ws[2].s, Desc: p.desc(ws, 3), Pos: p.pos(ws[2].col)}
		p.s.Return = p.tuple
		return
	}
	t, next, ok := p.parseType(ws, 1, true)
	if !ok {
		return
	}
	p.s.Return = &Return{Type: t, Desc: p.desc(ws, next), Pos: p.pos(ws[1].col)}
}

func (p *headerParser) field(ws []word) {
	if p.tuple == nil {
		if !p.s.mayLack("@return") {
			p.r.errorf(p.pos(ws[0].col), "---@field without a preceding ---@return tuple Name")
		}
		return
	}
	if len(ws) < 3 {
		p.r.errorf(p.pos(ws[0].col), "malformed ---@field: want ---@field name type description")
		return
	}
	if !isLuaName(ws[1].s) {
		p.r.errorf(p.pos(ws[1].col), "malformed ---@field: %q is not a name (letters, digits and _)", ws[1].s)
		return
	}
	goName, ok := p.goName("@field", ws[1], ws[1].s)
	if !ok {
		return
	}
	t, next, ok := p.parseType(ws, 2, true)
	if !ok {
		return
	}
	if t.Shape == ShapeStatus {
		p.r.errorf(p.pos(ws[2].col), "a tuple field cannot be a status; use string")
		return
	}
	if t.Shape == ShapeDiscard {
		p.r.errorf(p.pos(ws[2].col), "a tuple field cannot be none: every element of the array is decoded; use string")
		return
	}
	name, at := ws[1].s, p.pos(ws[1].col)
	f := &Param{Name: name, GoName: goName, Type: t, Desc: p.desc(ws, next), Pos: at}
	if !p.declare("field", name, at, fmt.Sprintf("field %q", name)) ||
		!p.declare("field-go", f.GoName, at, fmt.Sprintf("field %q: its Go name %s is taken", name, f.GoName)) {
		return
	}
	p.tuple.Fields = append(p.tuple.Fields, f)
}

// isCode reports whether s looks like an error code: capitals, digits and
// '_', starting with a capital (OUT_OF_STOCK, BAD_ARG, E42).
func isCode(s string) bool {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func (p *headerParser) reply(ws []word, list *[]*Reply, kind string) {
	if len(ws) < 3 {
		p.r.errorf(p.pos(ws[0].col), "malformed ---@%s: want ---@%s VALUE Name description", kind, kind)
		return
	}
	v, n := ws[1], ws[2]
	value := v.s
	if kind == "error" {
		_, err := strconv.ParseInt(value, 10, 64)
		switch {
		case errors.Is(err, strconv.ErrRange):
			p.r.errorf(p.pos(v.col), "---@error value %s is outside int64: Redis integer replies are 64-bit, so it can never match", value)
			return
		case value == "ERR":
			p.r.errorf(p.pos(v.col), "---@error ERR does not match \"ERR ...\" replies: the runtime reads an error reply's code after dropping a leading \"ERR \" (servers and proxies add one); send a code of your own, e.g. redis.error_reply('FAILED ...')")
			return
		case err != nil && value != "nil" && !isCode(value):
			p.r.errorf(p.pos(v.col), "malformed ---@error value %q: want an integer (-1), nil, or an error code in capitals (OUT_OF_STOCK) that the script sends with redis.error_reply", value)
			return
		}
	} else if value == "nil" {
		p.r.errorf(p.pos(v.col), "---@status nil: a nil reply cannot be a named status; use ---@error nil Name, or an optional ---@return T?")
		return
	}
	// An integer as Redis sends it: "+1", "01" → "1". A ---@status of a
	// string reply keeps its text (checkReturn normalizes it for int64),
	// but duplicates are found by value either way.
	key := value
	if n, err := strconv.ParseInt(value, 10, 64); err == nil {
		key = strconv.FormatInt(n, 10)
		if kind == "error" {
			value = key
		}
	}
	if !isLuaName(n.s) {
		p.r.errorf(p.pos(n.col), "malformed ---@%s: name %q is not an identifier", kind, n.s)
		return
	}
	goName, ok := p.goName("@"+kind, n, n.s)
	if !ok {
		return
	}
	r := &Reply{Value: value, ValuePos: p.pos(v.col), Name: n.s, GoName: goName, NamePos: p.pos(n.col), Desc: p.desc(ws, 3)}
	if !p.declare("value", key, r.ValuePos, fmt.Sprintf("reply value %s", key)) ||
		!p.declare("reply", r.GoName, r.NamePos, fmt.Sprintf("%s name %q", kind, n.s)) {
		return
	}
	*list = append(*list, r)
}

// checkReturn reports reply declarations that do not fit the return type.
// It runs after the whole header is read, since tags come in any order.
func checkReturn(r *reporter, s *Script) {
	ret := s.Return
	if ret != nil && len(s.Statuses) > 0 {
		if ret.Shape != ShapeScalar || (ret.Elem != Int64 && ret.Elem != String) {
			r.errorf(s.Statuses[0].ValuePos, "---@status needs ---@return int64 or ---@return string (line %d declares %s)", ret.Pos.Line, typeString(ret))
		} else if ret.Elem == Int64 {
			for _, st := range s.Statuses {
				if n, err := strconv.ParseInt(st.Value, 10, 64); err != nil {
					r.errorf(st.ValuePos, "---@status value %q is not an integer, but the script returns int64", st.Value)
				} else {
					st.Value = strconv.FormatInt(n, 10)
				}
			}
		}
	}
	if ret != nil && ret.Shape == ShapeOptional {
		for _, e := range s.Errors {
			if e.Value == "nil" {
				r.errorf(e.ValuePos, "---@error nil and the optional ---@return %s (line %d) both claim the nil reply; drop one", typeString(ret), ret.Pos.Line)
			}
		}
	}
}

// typeString spells t as a header would.
func typeString(ret *Return) string {
	switch ret.Shape {
	case ShapeNone:
		return "nothing"
	case ShapeStatus:
		return "status"
	case ShapeDiscard:
		return "none"
	case ShapeMap:
		return "map[string]string"
	case ShapeTuple:
		return "tuple " + ret.Tuple
	case ShapeOptional:
		return ret.Elem.String() + "?"
	case ShapeSlice:
		return "[]" + ret.Elem.String()
	}
	return ret.Elem.String()
}

// defaultName derives a script's Go name from its file name:
// deduct.lua → Deduct, acquire_lock.lua → AcquireLock, get-ttl.lua → GetTTL.
func defaultName(file string) string {
	return pascal(strings.TrimSuffix(path.Base(file), ".lua"))
}
