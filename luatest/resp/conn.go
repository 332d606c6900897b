package resp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// Conn is a minimal synchronous connection to a Redis server that reads
// replies with every RESP distinction kept. It exists because a general
// client folds those away (rueidis strips "ERR " from error replies and
// hides whether a string was a status or a bulk reply), and redis-cli's
// output, which luagen eval reproduces, depends on them. It is not safe for
// concurrent use.
type Conn struct {
	c     net.Conn
	r     *bufio.Reader
	w     *bufio.Writer
	Proto int // 2 or 3, as negotiated by Dial
}

// Dial connects to addr (host:port) and, for proto 3, switches the
// connection to RESP3 with HELLO 3 as `redis-cli -3` does. timeout bounds
// the dial and every later command.
func Dial(addr string, proto int, timeout time.Duration) (*Conn, error) {
	if proto != 2 && proto != 3 {
		return nil, fmt.Errorf("resp: protocol %d, want 2 or 3", proto)
	}
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	conn := &Conn{c: c, r: bufio.NewReader(c), w: bufio.NewWriter(c), Proto: 2}
	if proto == 3 {
		_ = c.SetDeadline(time.Now().Add(timeout))
		r, err := conn.Do("HELLO", "3")
		if err != nil {
			c.Close()
			return nil, err
		}
		if r.Kind == Error {
			c.Close()
			return nil, fmt.Errorf("HELLO 3 failed: %s", r.Str)
		}
		conn.Proto = 3
	}
	_ = c.SetDeadline(time.Time{})
	return conn, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// SetDeadline sets the read and write deadline of the connection.
func (c *Conn) SetDeadline(t time.Time) error { return c.c.SetDeadline(t) }

// Do sends one command and reads its reply. An error reply is a Reply of
// Kind Error, not a Go error; the error is for I/O and protocol failures.
func (c *Conn) Do(args ...string) (Reply, error) {
	fmt.Fprintf(c.w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(c.w, "$%d\r\n%s\r\n", len(a), a)
	}
	if err := c.w.Flush(); err != nil {
		return Reply{}, err
	}
	return Read(c.r)
}

// ErrProtocol reports a malformed reply.
var ErrProtocol = errors.New("resp: protocol error")

// Read reads one reply from r, skipping RESP3 attributes.
func Read(r *bufio.Reader) (Reply, error) {
	line, err := r.ReadString('\n')
	// A line ends at CRLF, as hiredis reads it: FUNCTION LOAD's compile
	// errors carry a bare LF from the script (addReplyErrorSds does not
	// replace it).
	for err == nil && (len(line) < 2 || line[len(line)-2] != '\r') {
		var more string
		more, err = r.ReadString('\n')
		line += more
	}
	if err != nil {
		return Reply{}, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return Reply{}, fmt.Errorf("%w: line %q", ErrProtocol, line)
	}
	typ, body := line[0], line[1:len(line)-2]
	switch typ {
	case '+':
		return Reply{Kind: Status, Str: body}, nil
	case '-':
		return Reply{Kind: Error, Str: body}, nil
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			return Reply{}, fmt.Errorf("%w: integer %q", ErrProtocol, body)
		}
		return Reply{Kind: Int, Int: n}, nil
	case '_':
		return Reply{}, nil
	case ',':
		f, err := strconv.ParseFloat(body, 64)
		if err != nil && body != "nan" && body != "-nan" {
			return Reply{}, fmt.Errorf("%w: double %q", ErrProtocol, body)
		}
		return Reply{Kind: Double, Str: body, Float: f}, nil
	case '#':
		return BoolReply(body == "t"), nil
	case '(':
		return Reply{Kind: BigNumber, Str: body}, nil
	case '$', '=', '!':
		n, err := strconv.Atoi(body)
		if err != nil {
			return Reply{}, fmt.Errorf("%w: length %q", ErrProtocol, body)
		}
		if n < 0 {
			return Reply{}, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return Reply{}, err
		}
		s := string(buf[:n])
		switch typ {
		case '=':
			if len(s) >= 4 && s[3] == ':' {
				s = s[4:]
			}
			return Reply{Kind: Verbatim, Str: s}, nil
		case '!':
			return Reply{Kind: Error, Str: s}, nil
		}
		return Reply{Kind: Bulk, Str: s}, nil
	case '*', '~', '%', '>', '|':
		n, err := strconv.Atoi(body)
		if err != nil {
			return Reply{}, fmt.Errorf("%w: length %q", ErrProtocol, body)
		}
		if n < 0 {
			if typ == '*' {
				return NullArray, nil
			}
			return Reply{}, nil
		}
		count := n
		if typ == '%' || typ == '|' {
			count *= 2
		}
		elems := make([]Reply, count)
		for i := range elems {
			if elems[i], err = Read(r); err != nil {
				return Reply{}, err
			}
		}
		switch typ {
		case '|': // attribute: skip it, the reply follows
			return Read(r)
		case '%':
			return Reply{Kind: Map, Elems: elems}, nil
		case '~':
			return Reply{Kind: Set, Elems: elems}, nil
		}
		return Reply{Kind: Array, Elems: elems}, nil
	}
	return Reply{}, fmt.Errorf("%w: type byte %q in %q", ErrProtocol, typ, strings.TrimSpace(line))
}
