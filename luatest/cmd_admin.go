// Administrative commands scripts may call: from
// https://redis.io/commands/?group=server, ?group=cluster, ?group=pubsub
// and ?group=connection. luatest has no clients, replication, cluster or
// persistence, so these answer what a fresh standalone 7.0.15 server with
// no other clients answers, plausibly where the server's answer depends on
// its process (memory figures, the slow log).

package luatest

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	rediscmd "github.com/luagen/luagen/internal/commands"
	"github.com/luagen/luagen/luatest/resp"
)

var adminCommands = []*command{
	{name: "command", fn: cmdCommand},
	{name: "pubsub", fn: cmdPubsub},
	{name: "slowlog", fn: cmdSlowlog},
	{name: "memory", fn: cmdMemory},
	{name: "lolwut", fn: cmdLolwut},
	{name: "readonly", fn: cmdClusterDisabled},
	{name: "readwrite", fn: cmdClusterDisabled},
	{name: "asking", fn: cmdClusterDisabled},
	{name: "cluster", fn: cmdClusterDisabled},
	{name: "pfselftest", fn: func(c *cmdCtx, args []string) resp.Reply { return resp.OK }},
	{name: "acl", fn: cmdHelpOnly},
	{name: "client", fn: cmdHelpOnly},
	{name: "config", fn: cmdConfig},
	{name: "latency", fn: cmdHelpOnly},
	{name: "module", fn: cmdHelpOnly},
	{name: "migrate", fn: cmdMigrate},
}

// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH
// password | AUTH2 username password] [KEYS key [key ...]] —
// https://redis.io/commands/migrate/. The options, the timeout and the
// database are checked as migrateCommand checks them, and NOKEY answers
// when none of the keys exists; otherwise luatest, having no other server
// to reach, answers what the server answers when it cannot connect to the
// target (a refused port on a reachable host fails later, on the write:
// "IOERR error or timeout writing to target instance").
func cmdMigrate(c *cmdCtx, args []string) resp.Reply {
	keys := args[2:3]
	for j := 5; j < len(args); j++ {
		more := len(args) - 1 - j
		switch strings.ToLower(args[j]) {
		case "copy", "replace":
		case "auth":
			if more < 1 {
				return errSyntax
			}
			j++
		case "auth2":
			if more < 2 {
				return errSyntax
			}
			j += 2
		case "keys":
			if args[2] != "" {
				return resp.ErrorReply("ERR When using MIGRATE KEYS option, the key argument must be set to the empty string")
			}
			keys, j = args[j+1:], len(args)
		default:
			return errSyntax
		}
	}
	if _, ok := parseInt(args[4]); !ok { // the timeout, then the database
		return errNotInt
	}
	if _, ok := parseInt(args[3]); !ok {
		return errNotInt
	}
	for _, k := range keys {
		if c.r.lookup(k) != nil {
			return resp.ErrorReply("IOERR error or timeout connecting to the client")
		}
	}
	return resp.StatusReply("NOKEY")
}

// cmdHelpOnly answers CONTAINER HELP, the only subcommand of ACL, CLIENT,
// CONFIG, LATENCY and MODULE that scripts may call (the others are refused
// before a command runs), and the HELP of the other containers here.
func cmdHelpOnly(c *cmdCtx, args []string) resp.Reply {
	return helpReply(c.name)
}

// READONLY, READWRITE, ASKING, CLUSTER INFO — the standalone server's error.
func cmdClusterDisabled(c *cmdCtx, args []string) resp.Reply {
	return resp.ErrorReply("ERR This instance has cluster support disabled")
}

// COMMAND COUNT | LIST | INFO | GETKEYS | GETKEYSANDFLAGS | DOCS | HELP —
// https://redis.io/commands/command/, from the shared command table. INFO
// gives name, arity, flags and the first key position; ACL categories,
// tips and key-spec details are left empty.
func cmdCommand(c *cmdCtx, args []string) resp.Reply {
	var tops []string
	for _, n := range rediscmd.Names() {
		if !strings.Contains(n, "|") {
			tops = append(tops, n)
		}
	}
	sort.Strings(tops)
	if len(args) == 0 {
		args = []string{"INFO"} // commandCommand: every command's COMMAND INFO
	}
	switch strings.ToUpper(args[0]) {
	case "COUNT":
		return resp.IntReply(int64(len(tops)))
	case "LIST":
		return commandList(args[1:], tops)
	case "INFO":
		names := args[1:]
		if len(names) == 0 {
			names = tops
		}
		out := make([]resp.Reply, 0, len(names))
		for _, n := range names {
			info, ok := rediscmd.Lookup(n)
			if !ok {
				out = append(out, nullArray)
				continue
			}
			first := 0
			if len(info.Specs) > 0 && info.Specs[0].Keyword == "" {
				first = info.Specs[0].Index
			}
			out = append(out, resp.ArrayReply(resp.BulkReply(info.Name), resp.IntReply(int64(info.Arity)),
				resp.ArrayReply(), resp.IntReply(int64(first)), resp.IntReply(int64(first)),
				resp.IntReply(int64(min(first, 1))), resp.ArrayReply(), resp.ArrayReply(), resp.ArrayReply(), resp.ArrayReply()))
		}
		return resp.ArrayReply(out...)
	case "GETKEYS", "GETKEYSANDFLAGS":
		info, ok := rediscmd.LookupArgs(args[1:])
		if !ok {
			return resp.ErrorReply("ERR Invalid command specified")
		}
		if !info.ArityOK(len(args) - 1) {
			return resp.ErrorReply("ERR Invalid number of arguments specified for command")
		}
		keys := info.Keys(args[1:])
		if len(keys) == 0 {
			return resp.ErrorReply("ERR The command has no key arguments")
		}
		return resp.BulkArray(keys)
	case "DOCS":
		return c.mapReply(nil)
	case "HELP":
		return cmdHelpOnly(c, args)
	}
	return resp.ErrorReply("ERR unknown subcommand '" + args[0] + "'. Try COMMAND HELP.")
}

// commandList is COMMAND LIST [FILTERBY MODULE name | ACLCAT category |
// PATTERN pattern], with commandListCommand's syntax checks: FILTERBY and
// its two arguments must be all that follow. luatest has no modules, so
// MODULE matches nothing; PATTERN matches commands and "container|sub"
// names, as commandListWithFilter does. The table holds no ACL
// categories, so ACLCAT is not supported.
func commandList(opts, tops []string) resp.Reply {
	if len(opts) == 0 {
		return resp.BulkArray(tops)
	}
	if len(opts) != 3 || !strings.EqualFold(opts[0], "filterby") {
		return errSyntax
	}
	switch strings.ToLower(opts[1]) {
	case "module":
		return resp.ArrayReply()
	case "pattern":
		var out []string
		for _, n := range rediscmd.Names() {
			if globMatch(opts[2], n, true) {
				out = append(out, n)
			}
		}
		sort.Strings(out)
		return resp.BulkArray(out)
	case "aclcat":
		if !slices.Contains(aclCategories, strings.ToLower(opts[2])) {
			return resp.ArrayReply() // an unknown category filters everything out
		}
		return resp.ErrorReply("ERR luatest: COMMAND LIST FILTERBY ACLCAT is not supported (luatest's command table has no ACL categories)")
	}
	return errSyntax
}

// aclCategories are Redis 7.0's ACL categories (ACLCommandCategories in
// acl.c), as ACL CAT lists them.
var aclCategories = []string{"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
	"bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous",
	"connection", "transaction", "scripting"}

// PUBSUB CHANNELS | NUMSUB | NUMPAT | SHARDCHANNELS | SHARDNUMSUB | HELP —
// https://redis.io/commands/pubsub/: luatest has no subscribers.
func cmdPubsub(c *cmdCtx, args []string) resp.Reply {
	switch strings.ToUpper(args[0]) {
	case "CHANNELS", "SHARDCHANNELS":
		return resp.ArrayReply()
	case "NUMPAT":
		return resp.IntReply(0)
	case "NUMSUB", "SHARDNUMSUB":
		var out []resp.Reply
		for _, ch := range args[1:] {
			out = append(out, resp.BulkReply(ch), resp.IntReply(0))
		}
		return c.mapReply(out)
	}
	return cmdHelpOnly(c, args)
}

// SLOWLOG GET | LEN | RESET | HELP — https://redis.io/commands/slowlog/:
// luatest's slow log is always empty.
func cmdSlowlog(c *cmdCtx, args []string) resp.Reply {
	switch strings.ToUpper(args[0]) {
	case "GET":
		if len(args) == 2 {
			if _, bad := parseRangeLong(args[1], -1, math.MaxInt64, "count should be greater than or equal to -1"); bad != nil {
				return *bad
			}
		}
		return resp.ArrayReply()
	case "LEN":
		return resp.IntReply(0)
	case "RESET":
		return resp.OK
	}
	return cmdHelpOnly(c, args)
}

// MEMORY USAGE | DOCTOR | STATS | PURGE | MALLOC-STATS | HELP —
// https://redis.io/commands/memory/. USAGE estimates the value's size
// (the server's figure depends on its allocator).
func cmdMemory(c *cmdCtx, args []string) resp.Reply {
	switch strings.ToUpper(args[0]) {
	case "USAGE":
		// SAMPLES is read before the key is looked up (memoryCommand).
		for j := 2; j < len(args); j++ {
			if !strings.EqualFold(args[j], "samples") || j+1 >= len(args) {
				return errSyntax
			}
			n, ok := parseInt(args[j+1])
			if !ok {
				return errNotInt
			}
			if n < 0 {
				return errSyntax
			}
			j++
		}
		e := c.r.lookup(args[1])
		if e == nil {
			return resp.NilReply
		}
		n := 56 + len(args[1])
		switch e.kind {
		case typeString:
			n += len(e.str)
		case typeHash:
			for _, f := range e.hash.fields {
				n += len(f) + len(e.hash.values[f]) + 4
			}
		case typeList:
			for _, v := range e.list {
				n += len(v) + 2
			}
		case typeSet:
			for m := range e.set {
				n += len(m) + 8
			}
		case typeZSet:
			for m := range e.zset.scores {
				n += len(m) + 12
			}
		case typeStream:
			n += 600
			for _, en := range e.stream.entries {
				for _, f := range en.fields {
					n += len(f) + 2
				}
			}
		}
		return resp.IntReply(int64(n))
	case "DOCTOR":
		return resp.BulkReply("Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.")
	case "STATS":
		return c.mapReply([]resp.Reply{resp.BulkReply("peak.allocated"), resp.IntReply(1000000),
			resp.BulkReply("total.allocated"), resp.IntReply(1000000), resp.BulkReply("keys.count"),
			resp.IntReply(int64(len(c.r.keys("*"))))})
	case "PURGE":
		return resp.OK
	case "MALLOC-STATS":
		return resp.BulkReply("Stats not supported for the current allocator")
	}
	return cmdHelpOnly(c, args)
}

// LOLWUT [VERSION version] — https://redis.io/commands/lolwut/ (without
// the art, which the server draws at random).
//
// The arguments are checked as lolwutCommand checks them: VERSION's number
// (as "%u.0.0") picks the drawing, and versions 5 and 6 read up to three
// and two numbers of their own.
func cmdLolwut(c *cmdCtx, args []string) resp.Reply {
	v := redisVersion
	if len(args) >= 2 && strings.EqualFold(args[0], "version") {
		ver, ok := parseInt(args[1])
		if !ok {
			return errNotInt
		}
		v = fmt.Sprintf("%d.0.0", uint32(ver))
		args = args[2:]
	}
	numbers := 0
	switch {
	case v[0] == '5' && v[1] == '.' && v[2] != '9', v[0] == '4' && v[1] == '.' && v[2] == '9':
		numbers = 3 // lolwut5Command: cols, squares per row, squares per column
	case v[0] == '6' && v[1] == '.' && v[2] != '9', v[0] == '5' && v[1] == '.' && v[2] == '9':
		numbers = 2 // lolwut6Command: cols, rows
	}
	for i := 0; i < numbers && i < len(args); i++ {
		if _, ok := parseInt(args[i]); !ok {
			return errNotInt
		}
	}
	return resp.BulkReply("Redis ver. " + redisVersion + "\n")
}
