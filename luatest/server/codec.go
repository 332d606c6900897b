package server

import (
	"bufio"
	"errors"
	"io"
	"strconv"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/luatest/resp"
)

// Limits of the request reader, the server's defaults (networking.c:
// processMultibulkBuffer, proto-max-bulk-len, PROTO_INLINE_MAX_SIZE).
const (
	maxMultibulk = 1024 * 1024 // elements of one command
	maxBulk      = 512 << 20   // bytes of one argument
	maxInline    = 64 << 10    // bytes of an inline command
)

// protocolError is a malformed request: the server answers
// "-ERR Protocol error: <msg>" and closes the connection.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return "Protocol error: " + e.msg }

// readCommand reads one request: a RESP multibulk ("*2\r\n$3\r\nGET\r\n
// $1\r\nk\r\n"), as every client sends, or an inline command ("GET k\r\n"),
// as telnet sends, split as the server splits it (sdssplitargs). An empty
// request (an empty line, "*0") is nil.
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := readLine(r, maxInline)
	if err != nil {
		return nil, err
	}
	if len(line) == 0 || line[0] != '*' {
		args, err := luatest.SplitArgs(string(line))
		if err != nil {
			return nil, &protocolError{"unbalanced quotes in request"}
		}
		return args, nil
	}
	n, err := strconv.Atoi(string(line[1:]))
	if err != nil || n > maxMultibulk {
		return nil, &protocolError{"invalid multibulk length"}
	}
	if n <= 0 {
		return nil, nil
	}
	args := make([]string, n)
	for i := range args {
		line, err := readLine(r, maxInline)
		if err != nil {
			return nil, err
		}
		if len(line) == 0 || line[0] != '$' {
			return nil, &protocolError{"expected '$', got '" + string(line[:min(len(line), 1)]) + "'"}
		}
		size, err := strconv.Atoi(string(line[1:]))
		if err != nil || size < 0 || size > maxBulk {
			return nil, &protocolError{"invalid bulk length"}
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		args[i] = string(buf[:size])
	}
	return args, nil
}

var errTooBig = &protocolError{"too big inline request"}

// readLine reads up to "\n" and returns the line without "\r\n" (or "\n").
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
		if len(line) > limit {
			return nil, errTooBig
		}
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// appendReply appends r as a client speaking proto reads it. In RESP2 the
// RESP3 types become what the server sends there (addReplyMapLen,
// addReplyDouble, addReplyBool, addReplyVerbatim in networking.c): a map
// or set an array, a double or big number a bulk string, a boolean an
// integer, a verbatim string a bulk string of its text; a nil is "$-1",
// or "*-1" for [resp.NullArray].
func appendReply(b []byte, r resp.Reply, proto int) []byte {
	switch r.Kind {
	case resp.Nil:
		switch {
		case proto == 3:
			return append(b, "_\r\n"...)
		case r.Int == resp.NullArray.Int:
			return append(b, "*-1\r\n"...)
		}
		return append(b, "$-1\r\n"...)
	case resp.Status:
		return append(append(append(b, '+'), r.Str...), "\r\n"...)
	case resp.Error:
		return append(append(append(b, '-'), r.Str...), "\r\n"...)
	case resp.Int:
		return appendInt(b, ':', r.Int)
	case resp.Bulk:
		return appendBulk(b, r.Str)
	case resp.Double:
		if proto == 3 {
			return append(append(append(b, ','), r.Str...), "\r\n"...)
		}
		return appendBulk(b, r.Str)
	case resp.Bool:
		if proto == 3 {
			if r.Int != 0 {
				return append(b, "#t\r\n"...)
			}
			return append(b, "#f\r\n"...)
		}
		return appendInt(b, ':', r.Int)
	case resp.BigNumber:
		if proto == 3 {
			return append(append(append(b, '('), r.Str...), "\r\n"...)
		}
		return appendBulk(b, r.Str)
	case resp.Verbatim:
		if proto == 3 {
			b = appendInt(b, '=', int64(len(r.Str)+4))
			return append(append(append(b, "txt:"...), r.Str...), "\r\n"...)
		}
		return appendBulk(b, r.Str)
	case resp.Array, resp.Set, resp.Map:
		n, typ := len(r.Elems), byte('*')
		if proto == 3 {
			switch r.Kind {
			case resp.Set:
				typ = '~'
			case resp.Map:
				n, typ = n/2, '%'
			}
		}
		b = appendInt(b, typ, int64(n))
		for _, e := range r.Elems {
			b = appendReply(b, e, proto)
		}
		return b
	}
	return append(b, "-ERR luatest: unknown reply kind\r\n"...)
}

// appendInt appends typ, n and CRLF: an integer reply or a length.
func appendInt(b []byte, typ byte, n int64) []byte {
	return append(strconv.AppendInt(append(b, typ), n, 10), "\r\n"...)
}

// appendBulk appends s as a bulk string.
func appendBulk(b []byte, s string) []byte {
	return append(append(appendInt(b, '$', int64(len(s))), s...), "\r\n"...)
}

// appendPush appends a pub/sub message or (un)subscribe confirmation: a
// RESP3 push (">") in RESP3, an array in RESP2 (addReplyPushLen). Elements
// are bulk strings, the count after them an integer; a nil *string is a
// null (UNSUBSCRIBE with nothing subscribed).
func appendPush(b []byte, proto int, kind string, strs []*string, count *int64) []byte {
	n := 1 + len(strs)
	if count != nil {
		n++
	}
	typ := byte('*')
	if proto == 3 {
		typ = '>'
	}
	b = appendBulk(appendInt(b, typ, int64(n)), kind)
	for _, s := range strs {
		if s == nil {
			b = appendReply(b, resp.NilReply, proto)
			continue
		}
		b = appendBulk(b, *s)
	}
	if count != nil {
		b = appendInt(b, ':', *count)
	}
	return b
}
