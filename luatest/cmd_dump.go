package luatest

import (
	"encoding/binary"
	"strings"

	"github.com/luagen/luagen/luatest/resp"
)

var dumpCommands = []*command{
	{name: "dump", fn: cmdDump},
	{name: "restore", fn: cmdRestore},
	{name: "restore-asking", fn: cmdRestore},
}

// DUMP key — https://redis.io/commands/dump/ (createDumpPayload in
// cluster.c): the RDB serialization of the value (rdb.go), the RDB version
// (2 bytes, little endian) and a CRC64 of all that (8 bytes, little
// endian).
func cmdDump(c *cmdCtx, args []string) resp.Reply {
	e := c.r.lookup(args[0])
	if e == nil {
		return resp.NilReply
	}
	return resp.BulkReply(string(appendDumpFooter(appendRDBObject(nil, e))))
}

// appendDumpFooter appends the RDB version and the CRC64 of a DUMP or
// FUNCTION DUMP payload.
func appendDumpFooter(b []byte) []byte {
	b = append(b, rdbVersion&0xff, rdbVersion>>8)
	return binary.LittleEndian.AppendUint64(b, redisCRC64(b))
}

// verifyDumpPayload is cluster.c's: a payload of at least 10 bytes whose
// RDB version is at most ours and whose CRC64 matches.
func verifyDumpPayload(p []byte) bool {
	n := len(p)
	return n >= 10 && int(binary.LittleEndian.Uint16(p[n-10:])) <= rdbVersion &&
		binary.LittleEndian.Uint64(p[n-8:]) == redisCRC64(p[:n-8])
}

// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds]
// [FREQ frequency] — https://redis.io/commands/restore/ (restoreCommand
// in cluster.c, checks in its order). RESTORE-ASKING is the same command
// for cluster migrations. IDLETIME and FREQ are validated and ignored:
// luatest keeps no access times. The restored value takes the encoding
// the server would give it, as rdbLoadObject converts on load.
func cmdRestore(c *cmdCtx, args []string) resp.Reply {
	replace, absTTL := false, false
	idle, freq := false, false
	for j := 3; j < len(args); j++ {
		more := len(args) - j - 1
		switch opt := strings.ToLower(args[j]); {
		case opt == "replace":
			replace = true
		case opt == "absttl":
			absTTL = true
		case opt == "idletime" && more >= 1 && !freq:
			v, ok := parseInt(args[j+1])
			if !ok {
				return errNotInt
			}
			if v < 0 {
				return resp.ErrorReply("ERR Invalid IDLETIME value, must be >= 0")
			}
			idle = true
			j++
		case opt == "freq" && more >= 1 && !idle:
			v, ok := parseInt(args[j+1])
			if !ok {
				return errNotInt
			}
			if v < 0 || v > 255 {
				return resp.ErrorReply("ERR Invalid FREQ value, must be >= 0 and <= 255")
			}
			freq = true
			j++
		default:
			return errSyntax
		}
	}
	key := args[0]
	if !replace && c.r.lookup(key) != nil {
		return resp.ErrorReply("BUSYKEY Target key name already exists.")
	}
	ttl, ok := parseInt(args[1])
	if !ok {
		return errNotInt
	}
	if ttl < 0 {
		return resp.ErrorReply("ERR Invalid TTL value, must be >= 0")
	}
	payload := []byte(args[2])
	if !verifyDumpPayload(payload) {
		return resp.ErrorReply("ERR DUMP payload version or checksum are wrong")
	}
	// The server reads the object from the whole payload, footer included
	// (a 10-byte payload of zeros is an empty string).
	rd := &rdbReader{b: payload}
	typ, ok := rd.bytes(1)
	if !ok {
		return resp.ErrorReply("ERR Bad data format")
	}
	e, ok := rdbLoadObject(rd, typ[0])
	if !ok {
		return resp.ErrorReply("ERR Bad data format")
	}
	if replace {
		c.r.del(key)
	}
	if ttl != 0 && !absTTL {
		ttl += c.nowMs()
	}
	if ttl != 0 && ttl <= c.nowMs() {
		return resp.OK // already expired: the key is gone
	}
	e.expireAt = ttl
	c.r.db[key] = e
	return resp.OK
}
