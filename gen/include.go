package gen

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"

	"github.com/luagen/luagen/internal/lualines"
)

// Shared Lua (---@include; the manual is the package doc, "Shared Lua"):
// the header parse records the lines, expand builds the combined body and
// its spans, reporter.errorf maps the lint's positions back through them.

// Include is one ---@include line of a script's header.
type Include struct {
	Path string // as written: relative to the including file, forward slashes
	Pos  Pos    // where the path is written
}

// Span says that the lines of a script's combined body (Script.Body) from
// Line on, up to the next Span, are the lines of one file from FileLine on:
// the script's own .lua file or one it includes.
type Span struct {
	Line     int    // the first line of the span in Script.Body, 1-based
	Path     string // the file as diagnostics name it
	File     string // the file relative to the module root, as the generated code records it
	FileLine int    // the line of the file that Body's line Line is
}

// includeSite is where a script reaches an included file, for the check
// that no file is both a script of the package and included.
type includeSite struct {
	path string // the included file, cleaned
	by   string // the file whose ---@include line names it
	at   Pos
}

// parseInclude reads an include line on line: raw is its text from the
// tag on, which starts at column shift+1 of the line. It reports a
// malformed one. The path may be quoted, as BullMQ writes it (--- @include
// "includes/name"), and then may hold spaces; a path whose file name has
// no extension names a .lua file.
func parseInclude(r *reporter, line int, raw string, shift int) *Include {
	ws := splitWords(raw)
	at := func(w word) Pos { return Pos{line, w.col + shift} }
	if len(ws) < 2 {
		r.errorf(at(ws[0]), "malformed ---@include: want ---@include path.lua, relative to this file")
		return nil
	}
	p := ws[1].s
	if q := p[:1]; q == `"` || q == `'` {
		// A quoted path runs to the closing quote, spaces and all.
		start := ws[1].col // just after the opening quote, 0-based in raw
		n := strings.Index(raw[start:], q)
		if n < 0 {
			r.errorf(at(ws[1]), "---@include %s: the quote is not closed on this line", strings.TrimRight(raw[start-1:], " \t"))
			return nil
		}
		p = raw[start : start+n]
		if strings.TrimSpace(p) == "" {
			r.errorf(at(ws[1]), "malformed ---@include: the path is empty")
			return nil
		}
		rest := splitWords(raw[start+n+1:])
		ws = ws[:2]
		for _, w := range rest {
			w.col += start + n + 1
			ws = append(ws, w)
		}
	}
	if len(ws) > 2 {
		r.errorf(at(ws[2]), "malformed ---@include: unexpected %q after the path; include one file per line (a path with spaces goes in quotes)", ws[2].s)
	}
	if !strings.Contains(path.Base(p), ".") {
		p += ".lua" // BullMQ's form names the file without its extension
	}
	switch {
	case strings.Contains(p, `\`):
		r.errorf(at(ws[1]), "---@include %s: write the path with forward slashes, as on every platform", p)
	case path.IsAbs(p) || len(p) > 1 && p[1] == ':':
		r.errorf(at(ws[1]), "---@include %s: the path must be relative to this file, so the scripts build the same on every machine", p)
	case !strings.HasSuffix(p, ".lua"):
		r.errorf(at(ws[1]), "---@include %s: not a .lua file", p)
	default:
		return &Include{Path: p, Pos: at(ws[1])}
	}
	return nil
}

// reIncludeLine matches the comment text of an include line: "---@include"
// or, as BullMQ writes it, "--- @include" (its group 1 is the tag's
// start); reIncludeLike matches any comment that reads as one.
var (
	reIncludeLine = regexp.MustCompile(`^---[ \t]*(@include)(?:[ \t]|$)`)
	reIncludeLike = regexp.MustCompile(`(?i)^-+[ \t]*(@includes?)(?:[ \t]|$)`)
)

// scanIncludes finds the include lines in the code of a file (its lines
// from index from on): comments that start "---@include" or "--- @include"
// on a line of their own, outside strings and long comments. A comment
// that reads like one but is not taken ("-- @include", "--@include") is
// reported, since it would silently be a comment.
func scanIncludes(r *reporter, text string, lines []string, from int) []*Include {
	_, starts := splitLines(text)
	var comments []int
	scanLua(text, func(at int) { comments = append(comments, at) })
	var incs []*Include
	for _, at := range comments {
		i, _ := slices.BinarySearch(starts, at+1)
		i-- // the line holding at
		if i < from {
			continue
		}
		line := lines[i]
		col := at - starts[i]
		if strings.TrimLeft(line[:col], " \t") != "" {
			continue // a comment after code: not a line of its own
		}
		c := line[col:]
		if m := reIncludeLine.FindStringSubmatchIndex(c); m != nil {
			if inc := parseInclude(r, i+1, c[m[2]:], col+m[2]); inc != nil {
				incs = append(incs, inc)
			}
		} else if m := reIncludeLike.FindStringSubmatchIndex(c); m != nil {
			r.errorf(Pos{i + 1, col + m[2] + 1}, "%q is a plain comment: write \"---@include\" (or \"--- @include\") to include a file here", strings.TrimSpace(c[:m[3]]))
		}
	}
	return incs
}

// includedHeader reads the header of an included file: blank lines, "---"
// doc lines and include lines, reporting any other tag, a shebang, a byte
// order mark and a tag after the header (include lines anywhere are found
// by scanIncludes).
func includedHeader(r *reporter, text string, lines []string) {
	if strings.HasPrefix(text, "\ufeff") {
		r.errorf(Pos{1, 1}, "the file starts with a UTF-8 byte order mark, which Redis' Lua cannot parse: save it without one")
	}
	codeStart := len(lines)
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " \t")
		indent := len(line) - len(trimmed)
		if trimmed == "" || strings.HasPrefix(trimmed, "#!") {
			continue // a shebang is reported below, wherever it is
		}
		if !strings.HasPrefix(trimmed, "---") {
			codeStart = i
			break
		}
		if !strings.HasPrefix(trimmed, "---@") || reIncludeLine.MatchString(trimmed) {
			continue
		}
		ws := splitWords(line[indent+3:])
		r.errorf(Pos{i + 1, indent + 4}, "---%s in an included file: it takes only ---@include; the header of each script that includes it declares the keys, args and reply", ws[0].s)
	}
	_, strs := mask(text)
	slines, _ := splitLines(strs)
	for i, line := range slines {
		trimmed := strings.TrimLeft(line, " \t")
		switch {
		case strings.HasPrefix(trimmed, "#!"):
			r.errorf(Pos{i + 1, len(line) - len(trimmed) + 1}, "an included file cannot have a shebang: its text goes into each script that includes it, where only the script's line 1 may hold one")
		case i >= codeStart && strings.HasPrefix(trimmed, "---@") && !reIncludeLine.MatchString(trimmed):
			r.errorf(Pos{i + 1, len(line) - len(trimmed) + 4}, "%s after the header: tags belong in the --- block at the top of the file, which ended at line %d",
				strings.Fields(trimmed[3:])[0], codeStart)
		}
	}
}

// includedFile is an included file as read and checked on its own, which
// is the same whichever script includes it.
type includedFile struct {
	err    error // reading it; then the rest is unset
	text   string
	lines  []string
	incs   []*Include
	diags  Diagnostics // of its header and code, on its own lines
	broken bool        // its code does not parse, or returns (see checkCode)
}

// includeCache holds included files by path, so that the scripts of a
// package that include one file read and check it once.
type includeCache map[string]*includedFile

// expander builds a script's combined body.
type expander struct {
	read  func(string) ([]byte, error)
	cache includeCache
	diags Diagnostics
	state map[string]int // by cleaned path: onStack while being inlined, then inlined
	stack []string       // the paths being inlined, outermost first
	b     strings.Builder
	lines int  // line breaks written so far, as Lua counts them
	open  byte // the last byte written when it is a line break another could pair with, else 0
	spans []Span
	sites []includeSite
	// broken is set when an included file has a syntax error: it is
	// reported in that file, and the combined body is not linted.
	broken bool
}

const (
	onStack = 1
	inlined = 2
)

// expand returns text, the source of the script at p (file relative to the
// module root), with the files incs name inlined, each right after the
// line that names it, and the spans of the result. Problems are reported
// in r (at the script's lines) or in the included files. ok is false when
// an included file does not parse.
func expand(r *reporter, src Source, cache includeCache, text string, lines []string, incs []*Include) (body string, spans []Span, sites []includeSite, ok bool) {
	e := &expander{read: src.ReadInclude, cache: cache, state: map[string]int{}}
	e.state[filepath.Clean(src.Path)] = onStack
	e.stack = []string{src.Path}
	e.file(r, src.Path, src.File, text, incs)
	r.diags = append(r.diags, e.diags...)
	if len(e.spans) == 1 {
		return text, nil, e.sites, !e.broken // nothing was inlined
	}
	return e.b.String(), e.spans, e.sites, !e.broken
}

// file writes one file, with the files it includes inlined after the
// lines that name them: where the line stands, so an included file sees
// the locals declared above it (BullMQ includes its helpers after local
// rcall = redis.call).
func (e *expander) file(r *reporter, p, file, text string, incs []*Include) {
	_, starts := splitLines(text)
	done, from := 0, 1 // text[:done] is written; it ends before line from
	for _, inc := range incs {
		ip := filepath.Join(filepath.Dir(p), filepath.FromSlash(inc.Path)) // cleaned by Join, so also the key of state
		switch e.state[ip] {
		case onStack:
			i := len(e.stack) - 1
			for i > 0 && e.stack[i] != ip {
				i--
			}
			cycle := append(append([]string{}, e.stack[i:]...), ip)
			r.errorf(inc.Pos, "include cycle: %s; a file cannot include itself, directly or through others", strings.Join(cycle, " → "))
			continue
		case inlined:
			continue // once: where it was first reached
		}
		e.sites = append(e.sites, includeSite{path: ip, by: p, at: inc.Pos})
		f := e.load(ip)
		e.state[ip] = inlined
		if f.err != nil {
			r.errorf(inc.Pos, "cannot include %s: %v", inc.Path, f.err)
			continue
		}
		cut := len(text) // the end of the include's line, with its line break
		if inc.Pos.Line < len(starts) {
			cut = starts[inc.Pos.Line]
		}
		e.write(p, file, from, text[done:cut])
		done, from = cut, inc.Pos.Line+1
		hr := &reporter{path: ip, diags: slices.Clone(f.diags)}
		e.broken = e.broken || f.broken
		e.state[ip] = onStack
		e.stack = append(e.stack, ip)
		e.file(hr, ip, path.Join(path.Dir(file), inc.Path), f.text, f.incs)
		e.stack = e.stack[:len(e.stack)-1]
		e.state[ip] = inlined
		e.diags = append(e.diags, hr.diags...)
	}
	e.write(p, file, from, text[done:])
}

// load reads the included file at p and checks it on its own, once per
// cache.
func (e *expander) load(p string) *includedFile {
	if f, ok := e.cache[p]; ok {
		return f
	}
	f := &includedFile{err: errors.New("gen.Parse reads no files: build the Source with gen.Load, or set Source.ReadInclude")}
	var b []byte
	if e.read != nil {
		b, f.err = e.read(p)
	}
	if f.err == nil {
		r := &reporter{path: p}
		f.text = string(b)
		f.lines, _ = splitLines(f.text)
		includedHeader(r, f.text, f.lines)
		f.incs = scanIncludes(r, f.text, f.lines, 0)
		f.broken = checkCode(r, f.text, f.lines)
		f.diags = r.diags
	}
	e.cache[p] = f
	return f
}

var reReturn = regexp.MustCompile(`\breturn\b`)

// checkCode parses an included file on its own, so that a syntax error is
// reported in it rather than where the including script's code goes on,
// and reports a return at its top level, which would end the script there.
// It returns whether it found either.
func checkCode(r *reporter, text string, lines []string) (broken bool) {
	// A byte order mark and #! lines are reported by includedHeader.
	parsed := []byte(blankBOM(text))
	_, starts := splitLines(text)
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimLeft(line, " \t\ufeff"), "#!") {
			for j := starts[i]; j < starts[i]+len(line); j++ {
				parsed[j] = ' '
			}
		}
	}
	code, _, open := maskOpen(string(parsed))
	chunk, err := parse.Parse(strings.NewReader(string(parsed)), r.path)
	if err != nil {
		reportSyntax(r, err, string(parsed), lines, open)
		return true
	}
	if !checkLua51(r, string(parsed), lines) {
		return true
	}
	if ret := topReturn(chunk); ret != nil {
		r.errorf(newLocator(code).find(ret.Line(), reReturn),
			"an included file cannot return at its top level: its code runs inline, before the code of the script that includes it, which the return would end (Lua refuses it there, and a return in a block there, do return end, ends the script silently)")
		return true
	}
	return false
}

// topReturn finds a return of the chunk itself: at its top level or in
// one of its blocks (do, if, loops), not in a function.
func topReturn(ss []ast.Stmt) *ast.ReturnStmt {
	for _, st := range ss {
		var inner [][]ast.Stmt
		switch st := st.(type) {
		case *ast.ReturnStmt:
			return st
		case *ast.DoBlockStmt:
			inner = [][]ast.Stmt{st.Stmts}
		case *ast.IfStmt:
			inner = [][]ast.Stmt{st.Then, st.Else}
		case *ast.WhileStmt:
			inner = [][]ast.Stmt{st.Stmts}
		case *ast.RepeatStmt:
			inner = [][]ast.Stmt{st.Stmts}
		case *ast.NumberForStmt:
			inner = [][]ast.Stmt{st.Stmts}
		case *ast.GenericForStmt:
			inner = [][]ast.Stmt{st.Stmts}
		}
		for _, b := range inner {
			if ret := topReturn(b); ret != nil {
				return ret
			}
		}
	}
	return nil
}

// write appends chunk, lines of file p from line from on, to the body.
func (e *expander) write(p, file string, from int, chunk string) {
	if chunk == "" {
		return
	}
	if e.b.Len() > 0 {
		if last := e.b.String()[e.b.Len()-1]; last != '\n' && last != '\r' {
			// The previous file ends without a line break.
			e.b.WriteByte('\n')
			e.lines++
			e.open = '\n'
		}
		if e.open != 0 && (chunk[0] == '\n' || chunk[0] == '\r') && chunk[0] != e.open {
			// Lua would read the two breaks as one ("\n\r", "\r\n") and
			// every later line would be one off: a blank keeps them apart.
			e.b.WriteByte(' ')
		}
	}
	if n := len(e.spans); n == 0 || e.spans[n-1].Path != p || e.spans[n-1].FileLine+e.lines+1-e.spans[n-1].Line != from {
		e.spans = append(e.spans, Span{Line: e.lines + 1, Path: p, File: file, FileLine: from})
	}
	e.b.WriteString(chunk)
	n, open := lualines.Breaks(chunk)
	e.lines += n
	e.open = open
}

// Expand returns the text a script sends, its .lua file with the files its
// ---@include lines name inlined (read with src.ReadInclude), and the spans
// that map its lines back to those files (nil when nothing is inlined),
// reporting only problems with the includes: what `luagen eval` runs. Use
// [Generate] or [ParseSource] to check the script itself.
func Expand(src Source) (string, []Span, Diagnostics) {
	text := string(src.Src)
	lines, _ := splitLines(text)
	r := &reporter{path: src.Path}
	incs := scanIncludes(r, text, lines, 0)
	if len(incs) == 0 {
		return text, nil, r.diags.Sort()
	}
	body, spans, _, _ := expand(r, src, includeCache{}, text, lines, incs)
	return body, spans, r.diags.Sort()
}

// spanAt returns the span holding line of a combined body and the line of
// that span's file it is, or nil when spans is empty.
func spanAt(spans []Span, line int) (*Span, int) {
	var at *Span
	for i := range spans {
		if spans[i].Line > line {
			break
		}
		at = &spans[i]
	}
	if at == nil {
		return nil, line
	}
	return at, at.FileLine + line - at.Line
}

// Position returns the file (as diagnostics name it) and line that line
// of s.Body comes from: s.Path and line unless it was inlined by
// ---@include.
func (s *Script) Position(line int) (string, int) {
	if sp, n := spanAt(s.Spans, line); sp != nil {
		return sp.Path, n
	}
	return s.Path, line
}

// inlinedFiles returns the module-relative files s inlines, in order.
func (s *Script) inlinedFiles() []string {
	var out []string
	seen := map[string]bool{s.File: true}
	for _, sp := range s.Spans {
		if !seen[sp.File] {
			seen[sp.File] = true
			out = append(out, sp.File)
		}
	}
	return out
}

// checkIncluded reports files that are both scripts of the package and
// included by one: the script would be generated from them too.
func checkIncluded(scripts []*Script) Diagnostics {
	byPath := map[string]bool{}
	for _, s := range scripts {
		if s != nil {
			byPath[filepath.Clean(s.Path)] = true
		}
	}
	var diags Diagnostics
	for _, s := range scripts {
		if s == nil {
			continue
		}
		for _, site := range s.includeSites {
			if byPath[site.path] {
				diags = append(diags, Diagnostic{Path: site.by, Pos: site.at, Msg: fmt.Sprintf(
					"%s is also a script of this package, so luagen would generate it as one too: keep included files out of the scripts it is given, in a subdirectory (lib/%s) or with a name starting with _ (_%s), which a directory argument skips",
					site.path, filepath.Base(site.path), filepath.Base(site.path))})
			}
		}
	}
	return diags
}
