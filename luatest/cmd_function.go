// Commands from https://redis.io/commands/?group=scripting: Functions
// (FUNCTION, FCALL, FCALL_RO), as functions.c in Redis 7.0 runs them.

package luatest

import (
	"fmt"
	"strings"

	"github.com/luagen/luagen/luatest/resp"
	"github.com/luagen/luagen/runtime"
)

var functionCommands = []*command{
	{name: "function", fn: cmdFunction},
	{name: "fcall", fn: cmdFcall},
	{name: "fcall_ro", fn: cmdFcall},
}

func init() { register(functionCommands...) }

// functionSubcommands are FUNCTION's subcommands with their arity, the
// subcommand included (as COMMAND INFO reports "function|load").
var functionSubcommands = map[string]struct {
	arity int
	fn    func(c *cmdCtx, args []string) resp.Reply
}{
	"load":    {-3, cmdFunctionLoad},
	"delete":  {3, cmdFunctionDelete},
	"flush":   {-2, cmdFunctionFlush},
	"list":    {-2, cmdFunctionList},
	"dump":    {2, cmdFunctionDump},
	"restore": {-3, cmdFunctionRestore},
	"stats":   {2, cmdFunctionStats},
	"help":    {2, cmdFunctionHelp},
	"kill": {2, func(*cmdCtx, []string) resp.Reply {
		return resp.ErrorReply("NOTBUSY No scripts in execution right now.")
	}},
}

// FUNCTION <subcommand> ... — https://redis.io/commands/function-load/
// and friends. args[0] is the subcommand; each subcommand function gets
// the whole argument list, the subcommand at index 0.
func cmdFunction(c *cmdCtx, args []string) resp.Reply {
	sub := strings.ToLower(args[0])
	s, ok := functionSubcommands[sub]
	if !ok {
		return resp.ErrorReply(fmt.Sprintf("ERR unknown subcommand '%.128s'. Try FUNCTION HELP.", args[0]))
	}
	argc := len(args) + 1
	if s.arity > 0 && argc != s.arity || s.arity < 0 && argc < -s.arity {
		return errArity("function|" + sub)
	}
	return s.fn(c, args)
}

// FUNCTION LOAD [REPLACE] function-code — https://redis.io/commands/function-load/
func cmdFunctionLoad(c *cmdCtx, args []string) resp.Reply {
	replace := false
	i := 1
	for ; i < len(args)-1; i++ {
		if !strings.EqualFold(args[i], "replace") {
			return resp.ErrorReply("ERR Unknown option given: " + args[i])
		}
		replace = true
	}
	if i >= len(args) {
		return resp.ErrorReply("ERR Function code is missing")
	}
	f := c.r.fns()
	name, msg := f.create(f.cur, args[i], replace)
	if msg != "" {
		return resp.ErrorReply("ERR " + msg)
	}
	return resp.BulkReply(name)
}

// FUNCTION DELETE library-name — https://redis.io/commands/function-delete/
func cmdFunctionDelete(c *cmdCtx, args []string) resp.Reply {
	f := c.r.fns()
	lib := f.cur.libs[args[1]]
	if lib == nil {
		return resp.ErrorReply("ERR Library not found")
	}
	f.cur.unlink(lib)
	return resp.OK
}

// FUNCTION FLUSH [ASYNC|SYNC] — https://redis.io/commands/function-flush/
func cmdFunctionFlush(c *cmdCtx, args []string) resp.Reply {
	if len(args) > 2 {
		return resp.ErrorReply(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%.128s'. Try FUNCTION HELP.", args[0]))
	}
	if len(args) == 2 && !strings.EqualFold(args[1], "sync") && !strings.EqualFold(args[1], "async") {
		return resp.ErrorReply("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
	}
	c.r.fns().cur = newRegistry()
	return resp.OK
}

// FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE] —
// https://redis.io/commands/function-list/. Libraries come in load order
// and functions in registration order; the server lists both in its hash
// tables' order (see the README).
func cmdFunctionList(c *cmdCtx, args []string) resp.Reply {
	withCode, havePattern := false, false
	var pattern string
	for i := 1; i < len(args); i++ {
		switch {
		case !withCode && strings.EqualFold(args[i], "withcode"):
			withCode = true
		case !havePattern && strings.EqualFold(args[i], "libraryname"):
			if i >= len(args)-1 {
				return resp.ErrorReply("ERR library name argument was not given")
			}
			i++
			pattern, havePattern = args[i], true
		default:
			return resp.ErrorReply("ERR Unknown argument " + args[i])
		}
	}
	reg := c.r.fns().cur
	out := []resp.Reply{}
	for _, name := range reg.order {
		lib := reg.libs[name]
		if havePattern && !globMatch(pattern, lib.name, false) {
			continue
		}
		fns := make([]resp.Reply, 0, len(lib.funcs))
		for _, fn := range lib.funcs {
			desc := resp.NilReply
			if fn.hasDesc {
				desc = resp.BulkReply(fn.desc)
			}
			fns = append(fns, c.mapReply([]resp.Reply{
				resp.BulkReply("name"), resp.BulkReply(fn.name),
				resp.BulkReply("description"), desc,
				resp.BulkReply("flags"), c.flagsReply(fn.flags),
			}))
		}
		kvs := []resp.Reply{
			resp.BulkReply("library_name"), resp.BulkReply(lib.name),
			resp.BulkReply("engine"), resp.BulkReply("LUA"),
			resp.BulkReply("functions"), resp.ArrayReply(fns...),
		}
		if withCode {
			kvs = append(kvs, resp.BulkReply("library_code"), resp.BulkReply(lib.code))
		}
		out = append(out, c.mapReply(kvs))
	}
	return resp.ArrayReply(out...)
}

// flagsReply is functionListReplyFlags: a set of status replies in
// scripts_flags_def order.
func (c *cmdCtx) flagsReply(flags scriptFlags) resp.Reply {
	elems := []resp.Reply{}
	for _, fl := range []struct {
		bit  scriptFlags
		name string
	}{{flagNoWrites, "no-writes"}, {flagAllowOOM, "allow-oom"}, {flagAllowStale, "allow-stale"},
		{flagNoCluster, "no-cluster"}, {flagAllowCrossSlot, "allow-cross-slot-keys"}} {
		if flags&fl.bit != 0 {
			elems = append(elems, resp.StatusReply(fl.name))
		}
	}
	r := resp.ArrayReply(elems...)
	if c.proto == 3 {
		r.Kind = resp.Set
	}
	return r
}

// FUNCTION STATS — https://redis.io/commands/function-stats/: no function
// is ever running when a command runs here.
func cmdFunctionStats(c *cmdCtx, _ []string) resp.Reply {
	reg := c.r.fns().cur
	lua := c.mapReply([]resp.Reply{
		resp.BulkReply("libraries_count"), resp.IntReply(int64(len(reg.libs))),
		resp.BulkReply("functions_count"), resp.IntReply(int64(len(reg.funcs))),
	})
	return c.mapReply([]resp.Reply{
		resp.BulkReply("running_script"), resp.NilReply,
		resp.BulkReply("engines"), c.mapReply([]resp.Reply{resp.BulkReply("LUA"), lua}),
	})
}

// FCALL function numkeys [key ...] [arg ...] — https://redis.io/commands/fcall/
// and FCALL_RO (fcallCommandGeneric).
func cmdFcall(c *cmdCtx, args []string) resp.Reply {
	fn := c.r.fns().cur.funcs[strings.ToLower(args[0])]
	if fn == nil {
		return resp.ErrorReply("ERR Function not found")
	}
	n, ok := parseInt(args[1])
	if !ok {
		return resp.ErrorReply("ERR Bad number of keys provided")
	}
	if n > int64(len(args)-2) {
		return resp.ErrorReply("ERR Number of keys can't be greater than number of args")
	}
	if n < 0 {
		return resp.ErrorReply("ERR Number of keys can't be negative")
	}
	return c.r.callFunction(fn, args[2:2+n], args[2+n:], runOptions{proto: c.proto, ro: c.name == "fcall_ro", mode: runtime.ModeFCall})
}

// FUNCTION HELP — https://redis.io/commands/function-help/: the text of
// functionHelpCommand, as addReplyHelp sends it (status lines, "Prints this help." last).
func cmdFunctionHelp(*cmdCtx, []string) resp.Reply { return helpReply("function") }
