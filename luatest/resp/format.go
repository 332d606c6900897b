package resp

import (
	"fmt"
	"strconv"
	"strings"
)

// Format renders r exactly as `redis-cli --no-raw` prints it, trailing
// newline included: "(integer) 3", "(nil)", quoted bulk strings, bare status
// strings, "(error) ...", numbered arrays with nested indentation, and in
// RESP3 "1# key => value" maps, "1~ x" sets, "(double) 1.5", "(true)".
// It follows cliFormatReplyTTY in redis-cli.c of Redis 7.0.
//
// redis-cli 7.0 cannot print a RESP3 big number: it writes "Unknown reply
// type: 13" to stderr and exits 1. Format returns an *[UnprintableError]
// carrying that text for such a reply, and the output printed before it.
func Format(r Reply) (string, error) {
	var b strings.Builder
	err := formatTTY(&b, r, "")
	return b.String(), err
}

// UnprintableError is a reply redis-cli 7.0 refuses to print. Msg is the
// line redis-cli writes to stderr before exiting with status 1.
type UnprintableError struct{ Msg string }

// Error returns Msg.
func (e *UnprintableError) Error() string { return e.Msg }

func formatTTY(b *strings.Builder, r Reply, prefix string) error {
	switch r.Kind {
	case Error:
		b.WriteString("(error) " + r.Str + "\n")
	case Status:
		b.WriteString(r.Str + "\n")
	case Int:
		b.WriteString("(integer) " + strconv.FormatInt(r.Int, 10) + "\n")
	case Double:
		b.WriteString("(double) " + r.Str + "\n")
	case Bulk:
		b.WriteString(Repr(r.Str) + "\n")
	case Verbatim:
		b.WriteString(r.Str + "\n")
	case Nil:
		b.WriteString("(nil)\n")
	case Bool:
		if r.Int != 0 {
			b.WriteString("(true)\n")
		} else {
			b.WriteString("(false)\n")
		}
	case Array, Map, Set:
		return formatAggregate(b, r, prefix)
	case BigNumber:
		return &UnprintableError{Msg: "Unknown reply type: 13"}
	default:
		return &UnprintableError{Msg: fmt.Sprintf("Unknown reply type: %d", r.Kind)}
	}
	return nil
}

func formatAggregate(b *strings.Builder, r Reply, prefix string) error {
	if len(r.Elems) == 0 {
		switch r.Kind {
		case Array:
			b.WriteString("(empty array)\n")
		case Map:
			b.WriteString("(empty hash)\n")
		default:
			b.WriteString("(empty set)\n")
		}
		return nil
	}
	n := len(r.Elems)
	if r.Kind == Map {
		n /= 2
	}
	idxlen := len(strconv.Itoa(n))
	sub := prefix + strings.Repeat(" ", idxlen+2)
	sep := ")"
	switch r.Kind {
	case Set:
		sep = "~"
	case Map:
		sep = "#"
	}
	for i := 0; i < len(r.Elems); i++ {
		human := i + 1
		if r.Kind == Map {
			human = i/2 + 1
		}
		if i > 0 {
			b.WriteString(prefix)
		}
		fmt.Fprintf(b, "%*d%s ", idxlen, human, sep)
		if err := formatTTY(b, r.Elems[i], sub); err != nil {
			return err
		}
		if r.Kind == Map {
			i++
			// The key's newline is replaced by " => " (sdsrange(out,0,-2)).
			s := b.String()
			b.Reset()
			b.WriteString(s[:len(s)-1])
			b.WriteString(" => ")
			if i >= len(r.Elems) {
				return &UnprintableError{Msg: "map reply with an odd number of elements"}
			}
			if multiline(r.Elems[i]) {
				b.WriteString("\n" + sub)
			}
			if err := formatTTY(b, r.Elems[i], sub); err != nil {
				return err
			}
		}
	}
	return nil
}

// multiline is cliIsMultilineValueTTY.
func multiline(r Reply) bool {
	switch r.Kind {
	case Array, Set:
		if len(r.Elems) == 0 {
			return false
		}
		if len(r.Elems) > 1 {
			return true
		}
		return multiline(r.Elems[0])
	case Map:
		if len(r.Elems) == 0 {
			return false
		}
		if len(r.Elems) > 2 {
			return true
		}
		return multiline(r.Elems[1])
	}
	return false
}

// Repr quotes s as sdscatrepr does: double quotes, \\ \" \n \r \t \a \b
// escapes, printable ASCII as is, every other byte as \xHH.
func Repr(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		default:
			if c >= 0x20 && c < 0x7f {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
