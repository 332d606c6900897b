package gen

import (
	"strings"
)

// Parse reads one script: its shebang, its header block and its Lua code,
// which it lints against the header. path names the file in diagnostics (as
// the user gave it); file is its path relative to the module root, recorded
// in the generated code. The Script is usable only when there are no
// diagnostics.
func Parse(path, file string, src []byte) (*Script, Diagnostics) {
	r := &reporter{path: path}
	text := string(src)
	s := &Script{Path: path, File: file, Body: text}
	lines, _ := splitLines(text)
	codeStart := parseHeader(r, s, lines)
	checkReturn(r, s)
	if s.Name == "" {
		s.Name, s.NamePos = defaultName(path), Pos{1, 1}
		if !isExported(s.Name) {
			r.errorf(Pos{1, 1}, "cannot make a Go name from the file name; declare one with ---@script Name")
		}
	}
	// A tag after the header would silently be a plain comment.
	_, strs := mask(text)
	slines, _ := splitLines(strs)
	for i := codeStart; i < len(slines); i++ {
		trimmed := strings.TrimLeft(slines[i], " \t")
		if strings.HasPrefix(trimmed, "---@") {
			col := len(slines[i]) - len(trimmed) + 4
			r.errorf(Pos{i + 1, col}, "%s after the header: tags belong in the --- block at the top of the file, which ended at line %d",
				strings.Fields(trimmed[3:])[0], codeStart)
		} else if strings.HasPrefix(trimmed, "#!") {
			r.errorf(Pos{i + 1, len(slines[i]) - len(trimmed) + 1}, "the shebang must be on line 1: Redis reads flags only there and fails to compile a script with #! anywhere else")
		}
	}
	lintLua(r, s, text, lines)
	return s, r.diags.Sort()
}
