// Package lualines counts lines as Lua 5.1's lexer does (llex.c,
// inclinenumber): "\n", "\r", "\r\n" and "\n\r" are each one line break.
// Redis numbers a script's lines this way ("@user_script:N",
// "@user_function:N"), so the generator (where ---@include inlines files)
// and runtime (where a function library stacks scripts) use it to map a
// server's line back to a .lua file's.
package lualines

// Breaks counts the line breaks in s as Lua's lexer does and returns the
// last byte of s when it is a break that a following "\n" or "\r" would
// pair with (so text appended after s must not start with the other one),
// else 0.
func Breaks(s string) (n int, open byte) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\n' && c != '\r' {
			continue
		}
		n++
		if i+1 < len(s) && (s[i+1] == '\n' || s[i+1] == '\r') && s[i+1] != c {
			i++
		} else if i == len(s)-1 {
			open = c
		}
	}
	return n, open
}
