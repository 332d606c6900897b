// Package gen is luagen's compiler: it parses annotated Redis Lua scripts,
// checks them, and emits typed Go wrappers, all in memory.
//
// The pipeline is [Load] (read the .lua inputs) → [Generate] ([Parse] and
// lint each script, check names across the package, emit Go with jennifer
// through go/format) → [Write] or [Plan] (the only code that touches the
// output directory). cmd/luagen is a thin shell around these.
//
// # Annotation format
//
// One header block per file: the lines at the top that are blank or start
// with "---", after an optional shebang on line 1. The first other line
// (code, or a plain "--" comment) ends it; a "---@" tag after that is an
// error, since it would silently be a comment.
//
//	#!lua flags=no-writes                 optional; Redis 7's five flags only
//	--- Doc text, copied to the Go method.
//	---@script Name                       Go name (default: file name in PascalCase)
//	---@key name desc                     KEYS[n], in order; ---@key ...name for the rest
//	---@arg name type [unit] desc         ARGV[n], in order; ---@arg ...name type for the rest
//	---@return type [unit] desc           the reply; none means runtime.Value
//	---@return tuple Name desc            a positional array decoded into struct Name,
//	---@field name type [unit] desc       one line per element
//	---@error VALUE Name desc             a failure reply → sentinel ErrName
//	---@status VALUE Name desc            a named successful reply → constant <Script>Name
//	---@idempotent reason                 running twice = running once: retry after connection errors
//	---@unsafe-keys reason                turn off the cluster-safety lint for this file
//
// Arg types are string, []byte, int64, float64, bool, time.Duration and
// time.Time; the two time types need a unit, ms or s, right after the type.
// Reply types are those scalars, T? (a nil reply is a nil *T), []T,
// map[string]string (a flat field, value, ... array), status (a status
// reply such as OK: the method returns only error) and tuple. An ---@error
// VALUE is an integer, nil, or an error code in capitals matched against
// the first word of an error reply (redis.error_reply('CODE detail')); not
// ERR, which the runtime drops from the front of error replies.
// With ---@status lines the method returns a named type <Script>Reply over
// int64 or string, with constants and a String method.
//
// ---@idempotent says that running the script again with the same KEYS
// and ARGV has the effect and the reply of running it once (e.g. it records
// a request id atomically with its write and answers a repeated id with the
// first outcome). The generated ScriptSpec then sets Idempotent, and
// runtime.Script.Exec retries the call after a connection error or a
// transient error reply (LOADING, CLUSTERDOWN, ...), which it never does
// for other scripts, since a lost reply does not tell whether they ran.
//
// Go names are the annotation names in PascalCase with Go's initialisms (ttl
// → TTL, holdCount → HoldCount, sku_id → SKUID); since '_' is dropped, a
// name must still start with a letter without it ("_" and "_2fa" are
// errors). Every generated package-level name (<Script>Keys, <Script>Args,
// <Script>Script, tuple types, Err sentinels, status constants) must be
// unique in the package, as must script names and output file names;
// collisions are reported at the tag that caused them. Output file names
// must build on every platform: not starting with '.' or '_' (go build
// ignores those), without a _GOOS or _GOARCH suffix (get_windows.lua.go
// would build only on Windows), and not differing from another only in case.
//
// # Checks
//
// [Parse] reports, as path:line:col: message, malformed and unknown tags
// (with a suggestion), unknown types and units, duplicate names and reply
// values, shebang flags and options Redis 7 rejects (quoting the server's
// message), a #! line below line 1, Lua syntax errors (gopher-lua's parser;
// it accepts a little more than Redis' Lua 5.1, e.g. goto), KEYS[n] and
// ARGV[n] beyond what the header declares, declared keys and args the
// script never reads, "return false" in a script that returns bool (Redis
// sends Lua false as a nil reply), calls of commands Redis refuses in
// scripts, and write commands in a flags=no-writes script.
//
// A script that reads KEYS or ARGV as a whole (KEYS[i] with a variable i,
// #KEYS, ipairs(KEYS), unpack(KEYS), or passing KEYS anywhere) counts as
// using every declared key or arg; literal indexes are still checked against
// the declaration.
//
// # Cluster-safety lint
//
// Redis Cluster routes a script by its KEYS, so every key a script touches
// must arrive in KEYS. For each redis.call and redis.pcall whose command
// name is a string literal, the lint finds the key arguments from the
// command's Redis 7 key specifications (commands_table.go, generated from
// COMMAND on redis-server 7.0.15: single keys, DEL/MGET/EXISTS-style lists,
// MSET's every other argument, ZUNIONSTORE's numkeys, XREAD's half after
// STREAMS; PUBLISH has no key and SPUBLISH's channel is marked not-a-key).
// A command not in the table is assumed to take one key, its first
// argument. It then traces where each key argument comes from and reports
// one that
//
//   - is built in Lua: string concatenation (..), string.format or another
//     string.* function, a string method (k:upper()), table.concat;
//   - comes from ARGV: ARGV[n], unpack(ARGV), a loop variable of
//     ipairs(ARGV);
//   - comes from a redis.call reply (a key name read from data);
//   - is a literal (only for commands in the table, so that subcommand words
//     of unknown commands are not mistaken for keys);
//
// directly or through local variables. A local's origin is the worst of
// every value assigned to it anywhere in its scope (flow-insensitive), so
// "local k = KEYS[1]; k = k .. ':x'" is reported at every use of k. Keys
// from KEYS[n], from locals only ever assigned KEYS values, and from loop
// variables of ipairs(KEYS) are fine.
//
// The lint cannot see: values that pass through function parameters, table
// fields, or the results of user-defined functions (all unknown, never
// reported); a command name that is not a literal; redis.call reached
// through an alias (local call = redis.call); keys named by patterns (SORT
// BY/GET, which the server's key specs also leave open); or a numkeys that
// is not a literal (only the first key after it is checked). Columns come
// from matching the masked source line (gopher-lua gives lines only), so
// two identical constructs on one line are told apart by order.
//
// # Output
//
// For each script, <file>.lua.go holds the Keys and Args structs, the
// result type, the Err sentinels (*runtime.CodeError), <Script>Script (a
// *runtime.Script with the body embedded verbatim) and the method on
// Scripts; scripts.lua.go holds Scripts, its constructor, All and Preload.
// Every file starts, as sqlc's output does, with
//
//	// Code generated by <Config.Command>; DO NOT EDIT.
//	// versions:
//	//   luagen <Config.Version>
//	// Source: <script file>          (not in scripts.lua.go)
//
// and nothing in the output depends on time or absolute paths.
package gen
