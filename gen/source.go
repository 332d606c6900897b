package gen

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
)

// splitLines splits src into lines the way the Lua lexer counts them (and
// so the way Redis reports @user_script:N): "\n", "\r", "\r\n" and "\n\r"
// each end one line. It also returns each line's byte offset.
func splitLines(src string) (lines []string, starts []int) {
	start := 0
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c != '\n' && c != '\r' {
			continue
		}
		lines, starts = append(lines, src[start:i]), append(starts, start)
		if i+1 < len(src) && (src[i+1] == '\n' || src[i+1] == '\r') && src[i+1] != c {
			i++
		}
		start = i + 1
	}
	if start < len(src) || len(lines) == 0 {
		lines, starts = append(lines, src[start:]), append(starts, start)
	}
	return lines, starts
}

// mask returns two copies of src with the same length and line breaks:
// code has comments and the contents of string literals replaced by spaces
// (delimiters stay), so a regexp over it finds only real tokens; strs has
// only string contents blanked, so comment lines remain visible. Both follow
// Lua 5.1's lexer: -- and --[==[ ]==] comments, '…' and "…" strings with
// backslash escapes, and [==[ ]==] long strings.
func mask(src string) (code, strs string) {
	code, strs, _ = maskOpen(src)
	return code, strs
}

// maskOpen is mask that also returns the offset where the first string,
// long string or long comment that is never closed opens, or -1.
func maskOpen(src string) (code, strs string, open int) {
	return scanLua(src, nil)
}

// scanLua is maskOpen that also calls lineComment, when not nil, with the
// offset of each "--" that starts a comment running to the end of its line
// (not a long comment, and not "--" inside a string or a long comment).
func scanLua(src string, lineComment func(at int)) (code, strs string, open int) {
	open = -1
	opened := func(at int) {
		if open < 0 {
			open = at
		}
	}
	c := []byte(src)
	s := []byte(src)
	blank := func(b []byte, from, to int) {
		for i := from; i < to && i < len(b); i++ {
			if b[i] != '\n' && b[i] != '\r' {
				b[i] = ' '
			}
		}
	}
	i := 0
	for i < len(src) {
		switch ch := src[i]; {
		case ch == '-' && strings.HasPrefix(src[i:], "--"):
			end := 0
			if lvl, ok := longBracket(src, i+2); ok {
				var closed bool
				if end, closed = closeLong(src, i+2+lvl+2, lvl); !closed {
					opened(i)
				}
			} else {
				if lineComment != nil {
					lineComment(i)
				}
				end = i + 2
				for end < len(src) && src[end] != '\n' && src[end] != '\r' {
					end++
				}
			}
			blank(c, i, end)
			i = end
		case ch == '\'' || ch == '"':
			j := i + 1
			for j < len(src) && src[j] != ch && src[j] != '\n' && src[j] != '\r' {
				if src[j] == '\\' {
					j++
					// An escaped line break continues the string; like a
					// line break anywhere, \r\n and \n\r are one.
					if j+1 < len(src) && (src[j] == '\n' || src[j] == '\r') && (src[j+1] == '\n' || src[j+1] == '\r') && src[j+1] != src[j] {
						j++
					}
				}
				j++
			}
			if j >= len(src) || src[j] != ch {
				opened(i)
			}
			j = min(j, len(src))
			blank(c, i+1, j)
			blank(s, i+1, j)
			i = j + 1
		case ch == '[':
			if lvl, ok := longBracket(src, i); ok {
				start := i + lvl + 2
				end, closed := closeLong(src, start, lvl)
				if !closed {
					opened(i)
				}
				close := max(start, end-lvl-2)
				blank(c, start, close)
				blank(s, start, close)
				i = end
				continue
			}
			i++
		default:
			i++
		}
	}
	return string(c), string(s), open
}

// longBracket reports whether src[i:] opens a long bracket [[ or [==[ and
// returns its level (the number of '=').
func longBracket(src string, i int) (int, bool) {
	if i >= len(src) || src[i] != '[' {
		return 0, false
	}
	j := i + 1
	for j < len(src) && src[j] == '=' {
		j++
	}
	if j < len(src) && src[j] == '[' {
		return j - i - 1, true
	}
	return 0, false
}

// closeLong returns the offset just after the ]==] of the given level
// that closes a long bracket whose contents start at from, or len(src) and
// false when nothing closes it.
func closeLong(src string, from, lvl int) (int, bool) {
	closer := "]" + strings.Repeat("=", lvl) + "]"
	if k := strings.Index(src[min(from, len(src)):], closer); k >= 0 {
		return from + k + len(closer), true
	}
	return len(src), false
}

// locator finds columns for AST nodes, which gopher-lua gives only lines
// for, by matching patterns in the masked source line by line. The n-th
// lookup of one pattern on one line returns its n-th match, so two
// identical constructs on one line get their own columns as long as they
// are looked up in source order, which the linter's walk follows.
type locator struct {
	code   string
	starts []int
	lines  []string
	seen   map[string]int
	found  map[string][][]int // matches of one pattern on one line, computed once
	// matches of one NAME[index] pattern on one line by index value
	indexes map[string]map[float64][][]int
	// work counts the bytes the locator has scanned, a measure of its cost
	// that tests compare with the source's length: columns must cost
	// linear time, however many constructs share a line.
	work int
}

func newLocator(code string) *locator {
	lines, starts := splitLines(code)
	return &locator{code: code, starts: starts, lines: lines, seen: map[string]int{}, found: map[string][][]int{},
		indexes: map[string]map[float64][][]int{}}
}

// find returns the position of the next match of re (its first submatch
// when it has one) on line, or the line's first non-blank column.
func (l *locator) find(line int, re *regexp.Regexp) Pos {
	if line < 1 || line > len(l.lines) {
		return Pos{max(line, 1), 1}
	}
	text := l.lines[line-1]
	k := re.String() + "\x00" + strconv.Itoa(line)
	n := l.seen[k]
	l.seen[k] = n + 1
	ms, ok := l.found[k]
	if !ok {
		ms = re.FindAllStringSubmatchIndex(text, -1)
		l.found[k] = ms
		l.work += len(text)
	}
	if len(ms) == 0 {
		return Pos{line, len(text) - len(strings.TrimLeft(text, " \t")) + 1}
	}
	m := ms[min(n, len(ms)-1)]
	if len(m) >= 4 && m[2] >= 0 {
		return Pos{line, m[2] + 1}
	}
	return Pos{line, m[0] + 1}
}

// findIndex returns the position of the next match of re, a pattern for
// NAME[index] capturing the index, on line whose index is a number literal
// equal to n however it is written (2, 0x2, 2.0, 2e0), or the line's first
// non-blank column. Like find, the k-th lookup returns the k-th match. The
// matches of a line are read once and grouped by value.
func (l *locator) findIndex(line int, re *regexp.Regexp, n int) Pos {
	if line < 1 || line > len(l.lines) {
		return Pos{max(line, 1), 1}
	}
	text := l.lines[line-1]
	lk := re.String() + "\x00" + strconv.Itoa(line)
	byValue, ok := l.indexes[lk]
	if !ok {
		byValue = map[float64][][]int{}
		l.work += len(text)
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			if v, isNum := luaNumber(text[m[2]:m[3]]); isNum {
				byValue[v] = append(byValue[v], m)
			}
		}
		l.indexes[lk] = byValue
	}
	k := lk + "\x00" + strconv.Itoa(n)
	seen := l.seen[k]
	l.seen[k] = seen + 1
	ms := byValue[float64(n)]
	if len(ms) == 0 {
		return Pos{line, len(text) - len(strings.TrimLeft(text, " \t")) + 1}
	}
	return Pos{line, ms[min(seen, len(ms)-1)][0] + 1}
}

// luaNumber reads a Lua 5.1 number literal: decimal (a leading 0 is not
// octal), with a fraction or exponent, or 0x hexadecimal.
func luaNumber(s string) (float64, bool) {
	// Out of range is a number, as for Lua 5.1's strtod and strtoul: 1e309
	// is inf, 1e-400 is 0, and a hex literal past 64 bits is 2^64 - 1.
	inRange := func(err error) bool {
		var ne *strconv.NumError
		return err == nil || errors.As(err, &ne) && ne.Err == strconv.ErrRange
	}
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		u, err := strconv.ParseUint(s[2:], 16, 64)
		return float64(u), inRange(err)
	}
	if s == "" || !(s[0] >= '0' && s[0] <= '9' || s[0] == '.') {
		return 0, false // ParseFloat would take "inf" and "nan"
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, inRange(err)
}

// offset converts a byte offset in the source to a position.
func (l *locator) offset(off int) Pos {
	lo, hi := 0, len(l.starts)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if l.starts[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return Pos{lo + 1, off - l.starts[lo] + 1}
}

// callArgs returns the position of each of the first n arguments of the
// call whose callee ends at byte offset end (e.g. just after
// "redis.call"): it finds the '(' and splits the masked text at top-level
// commas, stopping at the n-th argument so that nested calls are not
// scanned again for each level. It returns nil for the other call syntaxes
// (f'str', f{table}).
func (l *locator) callArgs(end, n int) []Pos {
	i := end
	defer func() { l.work += i - end }()
	for i < len(l.code) && isSpace(l.code[i]) {
		i++
	}
	if i >= len(l.code) || l.code[i] != '(' {
		return nil
	}
	var out []Pos
	depth := 0
	expectArg := true
	for i++; i < len(l.code); i++ {
		c := l.code[i]
		if expectArg && !isSpace(c) {
			if c == ')' && depth == 0 {
				return out
			}
			out = append(out, l.offset(i))
			if len(out) == n {
				return out
			}
			expectArg = false
		}
		switch c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth == 0 {
				return out
			}
			depth--
		case ',':
			if depth == 0 {
				expectArg = true
			}
		}
	}
	return out
}
