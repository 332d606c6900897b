package gen

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Pos is a position in a .lua file: 1-based line and 1-based byte column.
type Pos struct {
	Line, Col int
}

// Diagnostic is one problem found in a script, reported as
// "path:line:col: message" where path is the file as the user named it.
// A Diagnostic with no Path is about the Config and prints as its message.
type Diagnostic struct {
	Path string
	Pos
	Msg string
}

func (d Diagnostic) String() string {
	if d.Path == "" {
		return d.Msg // about the Config, not a file
	}
	return fmt.Sprintf("%s:%d:%d: %s", d.Path, d.Line, d.Col, d.Msg)
}

// Diagnostics is a list of problems. Once sorted (by path, line, column,
// message) it prints the same whatever order files were checked in.
type Diagnostics []Diagnostic

// Sort orders ds by path, line, column and message, and drops exact
// duplicates (one construct can be reached twice, e.g. an undeclared KEYS[n]
// inside a redis.call that is also linted for cluster safety).
func (ds Diagnostics) Sort() Diagnostics {
	slices.SortFunc(ds, func(a, b Diagnostic) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Col, b.Col), cmp.Compare(a.Msg, b.Msg))
	})
	return slices.Compact(ds)
}

// Error returns the diagnostics one per line, so a Diagnostics can be
// returned as an error.
func (ds Diagnostics) Error() string {
	var b strings.Builder
	for i, d := range ds {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(d.String())
	}
	return b.String()
}

// reporter collects the diagnostics of one file.
type reporter struct {
	path  string
	diags Diagnostics
	// spans, set while the lint reads a script's combined body (the script
	// with its ---@include files inlined), map its lines back to the files.
	spans []Span
}

// errorf reports a problem at p: in a combined body, at the file and line
// p comes from, with "(included by path)" after the message when that is
// an included file, since whether it is a problem can depend on the
// script (e.g. KEYS[3] in a script that declares two keys).
func (r *reporter) errorf(p Pos, format string, args ...any) {
	if p.Line < 1 {
		p.Line = 1
	}
	if p.Col < 1 {
		p.Col = 1
	}
	path, msg := r.path, fmt.Sprintf(format, args...)
	if sp, n := spanAt(r.spans, p.Line); sp != nil {
		p.Line = n
		if sp.Path != r.path {
			path, msg = sp.Path, msg+" (included by "+r.path+")"
		}
	}
	r.diags = append(r.diags, Diagnostic{Path: path, Pos: p, Msg: msg})
}

// lineRef names line of the text being reported on, for a message about
// a position on line from: "line N", or "path:N" when the two are in
// different files of a combined body.
func (r *reporter) lineRef(line, from int) string {
	sp, n := spanAt(r.spans, line)
	fsp, _ := spanAt(r.spans, from)
	if sp == nil || fsp != nil && fsp.Path == sp.Path {
		return fmt.Sprintf("line %d", n)
	}
	return fmt.Sprintf("%s:%d", sp.Path, n)
}
