package luatest

import (
	"fmt"
	"hash/crc64"
	"strings"

	"github.com/luagen/luagen/luatest/resp"
)

// FUNCTION DUMP and RESTORE use the RDB encoding of functions (rdb.c):
// for each library the opcode RDB_OPCODE_FUNCTION2 and the library's
// payload as an RDB string, then the RDB version (2 bytes, little endian)
// and a CRC64 (Jones polynomial, as crc64.c computes it) of all that.
// The payload is written as rdbSaveRawString writes it (rdb.go), LZF
// compression included, so the bytes are the server's.

const (
	rdbOpcodeFunction  = 246 // 7.0 release candidates: name, engine, description, code
	rdbOpcodeFunction2 = 245 // 7.0: the payload with its shebang
	rdbVersion         = 10
)

// crcJones is the reflected Jones polynomial Redis' crc64 uses.
var crcJones = crc64.MakeTable(0x95ac9329ac4bc9b5)

// redisCRC64 is crc64(0, p, len) of crc64.c: no initial or final inversion.
func redisCRC64(p []byte) uint64 { return ^crc64.Update(^uint64(0), crcJones, p) }

// FUNCTION DUMP — https://redis.io/commands/function-dump/
func cmdFunctionDump(c *cmdCtx, _ []string) resp.Reply {
	reg := c.r.fns().cur
	var b []byte
	for _, name := range reg.order {
		b = append(b, rdbOpcodeFunction2)
		b = appendRDBString(b, reg.libs[name].code)
	}
	return resp.BulkReply(string(appendDumpFooter(b)))
}

// FUNCTION RESTORE serialized-value [FLUSH|APPEND|REPLACE] —
// https://redis.io/commands/function-restore/
func cmdFunctionRestore(c *cmdCtx, args []string) resp.Reply {
	if len(args) > 3 {
		return resp.ErrorReply(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%.128s'. Try FUNCTION HELP.", args[0]))
	}
	policy := "append"
	if len(args) == 3 {
		policy = strings.ToLower(args[2])
		if policy != "append" && policy != "replace" && policy != "flush" {
			return resp.ErrorReply("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
		}
	}
	data := []byte(args[1])
	n := len(data)
	if !verifyDumpPayload(data) {
		return resp.ErrorReply("ERR DUMP payload version or checksum are wrong")
	}
	f := c.r.fns()
	tmp := newRegistry()
	rd := &rdbReader{b: data[:n-10]}
	for rd.pos < len(rd.b) {
		typ := rd.b[rd.pos]
		rd.pos++
		var payload string
		switch typ {
		case rdbOpcodeFunction2:
			var ok bool
			if payload, ok = rd.str(); !ok {
				return resp.ErrorReply("ERR Failed loading library payload")
			}
		case rdbOpcodeFunction:
			name, ok1 := rd.str()
			engine, ok2 := rd.str()
			hasDesc, ok3 := rd.length()
			ok4 := true
			if ok1 && ok2 && ok3 && hasDesc != 0 {
				_, ok4 = rd.str()
			}
			code, ok5 := rd.str()
			if !(ok1 && ok2 && ok3 && ok4 && ok5) {
				return resp.ErrorReply("ERR failed loading the given functions payload")
			}
			payload = fmt.Sprintf("#!%s name=%s\n%s", engine, name, code)
		default:
			return resp.ErrorReply("ERR given type is not a function")
		}
		if _, msg := f.create(tmp, payload, false); msg != "" {
			return resp.ErrorReply("ERR " + msg)
		}
	}
	if policy == "flush" {
		f.cur = tmp
		return resp.OK
	}
	if msg := f.cur.join(tmp, policy == "replace"); msg != "" {
		return resp.ErrorReply("ERR " + msg)
	}
	return resp.OK
}

// join adds src's libraries to reg (libraryJoin): a library of the same
// name is an error unless replace; a function name taken by another
// library is always one, and leaves reg as it was.
func (reg *registry) join(src *registry, replace bool) string {
	var replaced []*library
	revert := func() {
		for _, old := range replaced {
			reg.link(old)
		}
	}
	for _, name := range src.order {
		if old := reg.libs[name]; old != nil {
			if !replace {
				revert()
				return fmt.Sprintf("Library %s already exists", name)
			}
			reg.unlink(old)
			replaced = append(replaced, old)
		}
	}
	for _, name := range src.order {
		for _, fn := range src.libs[name].funcs {
			if reg.funcs[strings.ToLower(fn.name)] != nil {
				revert()
				return fmt.Sprintf("Function %s already exists", fn.name)
			}
		}
	}
	for _, name := range src.order {
		reg.link(src.libs[name])
	}
	return ""
}
