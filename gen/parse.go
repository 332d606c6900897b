package gen

import (
	"fmt"
	"strings"
)

// Parse reads one script: its shebang, its header block and its Lua code,
// which it lints against the header. path names the file in diagnostics (as
// the user gave it); file is its path relative to the module root, recorded
// in the generated code. The Script is usable only when there are no
// diagnostics. Parse reads no files, so a script with ---@include lines
// needs [ParseSource] with a Source that can read them.
func Parse(path, file string, src []byte) (*Script, Diagnostics) {
	return ParseSource(Source{Path: path, File: file, Src: src})
}

// ParseSource is [Parse] for a Source, whose ReadInclude reads the files
// the script's ---@include lines name: they are inlined into Script.Body,
// and the lint reads the combined text but reports each problem at its own
// file and line (see include.go).
func ParseSource(src Source) (*Script, Diagnostics) {
	s, diags, _ := parseSource(src, includeCache{}, false)
	return s, diags
}

// parseCounted is ParseSource that also returns the locator of the lint,
// for tests that count its work (nil when the Lua did not parse).
func parseCounted(src Source) (*Script, Diagnostics, *locator) {
	return parseSource(src, includeCache{}, false)
}

// parseSource is parseCounted reading included files through incs, which
// [Generate] shares between the scripts of a package; unsafeKeys is
// [Config.UnsafeKeys].
func parseSource(src Source, incs includeCache, unsafeKeys bool) (*Script, Diagnostics, *locator) {
	path := src.Path
	r := &reporter{path: path}
	text := string(src.Src)
	s := &Script{Path: path, File: src.File, Body: text}
	if strings.HasPrefix(text, "\ufeff") {
		// Lua fails at the first byte. Check the rest as if the mark were
		// blank, so that every other diagnostic is still right.
		r.errorf(Pos{1, 1}, "the file starts with a UTF-8 byte order mark, which Redis' Lua cannot parse: save it without one")
		text = blankBOM(text)
	}
	lines, _ := splitLines(text)
	checkShebangEnd(r, text, lines)
	codeStart := parseHeader(r, s, lines)
	s.Includes = scanIncludes(r, text, lines, 0)
	if unsafeKeys && s.UnsafeKeys == "" {
		// The package's switch stands for the line every script would
		// otherwise need; the checks read only the reason's presence.
		s.UnsafeKeys = unsafeKeysFlag
	}
	_, strs := mask(text)
	slines, _ := splitLines(strs)
	// A tag written "--@arg" or "-- @arg" in the comment lines that end the
	// header would silently be a plain comment.
	for i := codeStart; i < len(slines); i++ {
		trimmed := strings.TrimLeft(slines[i], " \t")
		if !strings.HasPrefix(trimmed, "--") || strings.HasPrefix(trimmed, "---") || strings.HasPrefix(trimmed, "--[") {
			break
		}
		if at, tag := misspelledTag(trimmed); tag != "" && tag != "@include" { // see scanIncludes
			indent := len(slines[i]) - len(trimmed)
			r.errorf(Pos{i + 1, indent + at + 1}, "%q is a plain comment: write \"---%s\" (three dashes, no space) to declare a tag", trimmed[:at+len(tag)], tag)
			s.meant(tag)
		}
	}
	checkReturn(r, s)
	checkReplyHeader(r, s)
	if s.Name == "" {
		s.Name, s.NamePos = defaultName(path), Pos{1, 1}
		if !isExported(s.Name) && !s.mayLack("@script") {
			r.errorf(Pos{1, 1}, "cannot make a Go name from the file name; declare one with ---@script Name")
		}
	}
	// A tag after the header would silently be a plain comment.
	for i := codeStart; i < len(slines); i++ {
		trimmed := strings.TrimLeft(slines[i], " \t")
		if strings.HasPrefix(trimmed, "---@") && !reIncludeLine.MatchString(trimmed) {
			col := len(slines[i]) - len(trimmed) + 4
			ended := fmt.Sprintf("which ended at line %d", codeStart)
			if codeStart == 0 {
				ended = "and line 1 is already code"
			}
			r.errorf(Pos{i + 1, col}, "%s after the header: tags belong in the --- block at the top of the file, %s",
				strings.Fields(trimmed[3:])[0], ended)
		} else if strings.HasPrefix(trimmed, "#!") {
			r.errorf(Pos{i + 1, len(slines[i]) - len(trimmed) + 1}, "the shebang must be on line 1: Redis reads flags only there and fails to compile a script with #! anywhere else")
		}
	}
	if len(s.Includes) > 0 {
		// Positions up to here are the script's own lines, which need no
		// mapping; the lint reads the combined text (a mark blanked as
		// above) and r maps what it reports.
		body, spans, sites, ok := expand(r, src, incs, s.Body, lines, s.Includes)
		s.Body, s.Spans, s.includeSites = body, spans, sites
		if !ok {
			return s, r.diags.Sort(), nil // the included file's syntax error is reported in it
		}
		text = blankBOM(body)
		lines, _ = splitLines(text)
		r.spans = spans
	}
	loc := lintLua(r, s, text, lines)
	if loc != nil { // gopher-lua parsed it: does Redis' Lua 5.1?
		checkLua51(r, text, lines)
	}
	return s, r.diags.Sort(), loc
}

// blankBOM returns text with a leading UTF-8 byte order mark, which Lua
// cannot parse, replaced by as many blanks, so that the rest keeps its
// columns.
func blankBOM(text string) string {
	if rest, ok := strings.CutPrefix(text, "\ufeff"); ok {
		return "   " + rest
	}
	return text
}

// checkShebangEnd checks what Redis takes for the shebang: everything up to
// the first line feed. Without one Redis refuses the script; after a lone
// carriage return (which Lua counts as a line break) the shebang would run
// on into the next lines.
func checkShebangEnd(r *reporter, text string, lines []string) {
	if !strings.HasPrefix(text, "#!") {
		return
	}
	end := Pos{1, len(lines[0]) + 1}
	nl := strings.IndexByte(text, '\n')
	if nl < 0 {
		r.errorf(end, "Redis rejects this shebang: \"Invalid script shebang\": it reads the shebang up to the first line feed, and this file has none")
		return
	}
	if first := strings.TrimSuffix(text[:nl], "\r"); len(first) > len(lines[0]) {
		n, _ := splitLines(first)
		r.errorf(end, "Redis reads the shebang up to the first line feed, but line 1 ends with a carriage return alone, so lines 1-%d would be the shebang; end line 1 with \\n or \\r\\n", len(n))
	}
}
