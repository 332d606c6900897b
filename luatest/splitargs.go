package luatest

import (
	"errors"
	"strconv"
	"strings"
)

// ErrUnbalancedQuotes is returned by [SplitArgs] for a line whose quotes
// do not close, or a closing quote followed by something other than a
// space (redis-cli answers "Invalid argument(s)").
var ErrUnbalancedQuotes = errors.New("unbalanced quotes")

// SplitArgs splits a command line the way redis-cli and the server's
// inline protocol do (sdssplitargs in sds.c): words separated by spaces;
// "double quotes" with \n \r \t \b \a \\ \" and \xHH escapes; 'single
// quotes' with only \' escaped. An empty or all-space line yields no words.
func SplitArgs(line string) ([]string, error) {
	var out []string
	p := 0
	for {
		for p < len(line) && isSpace(line[p]) {
			p++
		}
		if p >= len(line) {
			return out, nil
		}
		var cur strings.Builder
		inq, insq := false, false
		for done := false; !done; {
			if inq {
				switch {
				case p >= len(line):
					return nil, ErrUnbalancedQuotes
				case line[p] == '\\' && p+3 < len(line) && line[p+1] == 'x' && isHex(line[p+2]) && isHex(line[p+3]):
					b, _ := strconv.ParseUint(line[p+2:p+4], 16, 8)
					cur.WriteByte(byte(b))
					p += 3
				case line[p] == '\\' && p+1 < len(line):
					p++
					switch c := line[p]; c {
					case 'n':
						cur.WriteByte('\n')
					case 'r':
						cur.WriteByte('\r')
					case 't':
						cur.WriteByte('\t')
					case 'b':
						cur.WriteByte('\b')
					case 'a':
						cur.WriteByte('\a')
					default:
						cur.WriteByte(c)
					}
				case line[p] == '"':
					// The closing quote must be followed by a space or the end.
					if p+1 < len(line) && !isSpace(line[p+1]) {
						return nil, ErrUnbalancedQuotes
					}
					done = true
				default:
					cur.WriteByte(line[p])
				}
			} else if insq {
				switch {
				case p >= len(line):
					return nil, ErrUnbalancedQuotes
				case line[p] == '\\' && p+1 < len(line) && line[p+1] == '\'':
					p++
					cur.WriteByte('\'')
				case line[p] == '\'':
					if p+1 < len(line) && !isSpace(line[p+1]) {
						return nil, ErrUnbalancedQuotes
					}
					done = true
				default:
					cur.WriteByte(line[p])
				}
			} else {
				switch {
				case p >= len(line) || line[p] == ' ' || line[p] == '\n' || line[p] == '\r' || line[p] == '\t' || line[p] == 0:
					done = true
				case line[p] == '"':
					inq = true
				case line[p] == '\'':
					insq = true
				default:
					cur.WriteByte(line[p])
				}
			}
			if p < len(line) {
				p++
			}
		}
		out = append(out, cur.String())
	}
}
