package gen

import (
	"strings"
)

// shebangFlags are the flags Redis 7 accepts in a script's shebang
// (eval.c, evalExtractShebangFlags; https://redis.io/docs/latest/develop/interact/programmability/eval-intro/#eval-flags).
var shebangFlags = []string{"no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys"}

// parseShebang checks line 1 the way Redis 7.0 does and records the flags.
// Messages quote the server's own error text (checked against
// redis-server 7.0.15), so a user can search for either.
func parseShebang(r *reporter, s *Script, line string) {
	line = strings.TrimRight(line, "\r")
	// Redis splits the line with sdssplitargs: whitespace-separated words,
	// where quotes group words. luagen does not follow quoting; refuse it.
	if i := strings.IndexAny(line, `"'`); i >= 0 {
		r.errorf(Pos{1, i + 1}, "quotes in the shebang are not supported: write #!lua flags=a,b")
		return
	}
	var ws []word
	for i := 0; i < len(line); {
		if isSpace(line[i]) {
			i++
			continue
		}
		j := i
		for j < len(line) && !isSpace(line[j]) {
			j++
		}
		ws = append(ws, word{line[i:j], i + 1})
		i = j
	}
	if ws[0].s != "#!lua" {
		r.errorf(Pos{1, 1}, "Redis rejects this shebang: \"Unexpected engine in script shebang: %s\"; scripts start with #!lua", ws[0].s)
		return
	}
	for _, w := range ws[1:] {
		value, ok := strings.CutPrefix(w.s, "flags=")
		if !ok {
			r.errorf(Pos{1, w.col}, "Redis rejects this shebang: \"Unknown lua shebang option: %s\"; the only option is flags=%s", w.s, strings.Join(shebangFlags, ","))
			continue
		}
		if value == "" {
			continue // "flags=" sets no flags; Redis accepts it
		}
		col := w.col + len("flags=")
		for _, f := range strings.Split(value, ",") {
			if !isShebangFlag(f) {
				msg := "Redis rejects this shebang: \"Unexpected flag in script shebang: " + f + "\"; "
				if c := closest(f, shebangFlags); c != "" && f != "" {
					msg += "did you mean \"" + c + "\"? "
				}
				r.errorf(Pos{1, col}, "%sthe flags are %s", msg, strings.Join(shebangFlags, ", "))
			} else {
				s.Flags = append(s.Flags, f)
				switch f {
				case "no-writes":
					s.ReadOnly = true
				case "allow-cross-slot-keys":
					s.AllowCrossSlot = true
				}
			}
			col += len(f) + 1
		}
	}
}

func isShebangFlag(f string) bool {
	for _, x := range shebangFlags {
		if f == x {
			return true
		}
	}
	return false
}

// isSpace is C's isspace, which sdssplitargs uses.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}
