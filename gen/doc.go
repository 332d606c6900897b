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
// error, since it would silently be a comment, except an include line,
// which stands anywhere (see Shared Lua).
//
//	#!lua flags=no-writes                 optional; Redis 7's five flags only
//	--- Doc text, copied to the Go method.
//	---@script Name                       Go name (default: file name in PascalCase)
//	---@keys Type Ctor prefix{tag} desc   a key family (once per package): struct Type, func Ctor;
//	                                      the tag may stand anywhere: <prefix>:{queue}, {prefix}:<queue>
//	---@key name desc                     KEYS[n], in order; ---@key ...name for the rest
//	---@key name {tag}suffix desc         KEYS[n], laid out in the family with that {tag}
//	---@arg name type [unit] desc         ARGV[n], in order; ---@arg ...name type for the rest
//	---@arg name type [unit] [lo,hi] desc ARGV[n] with a range (or {a|b|c} for a string), checked before sending
//	---@arg name {tag}suffix desc         ARGV[n], a string laid out in the family: a key prefix
//	---@elem arg[N] name {tag}suffix desc element N of an arg the script decodes, laid out in the family
//	---@unused name reason                a declared key or arg the script keeps for its callers unread
//	---@return type [unit] desc           the reply; without one, runtime.Value
//	---@return tuple Name desc            a positional array decoded into struct Name,
//	---@field name type [unit] desc       one line per element
//	---@error VALUE Name desc             a failure reply → sentinel ErrName
//	---@status VALUE Name desc            a named successful reply → constant <Script>Name
//	---@idempotent reason                 running twice = running once: retry after connection errors
//	---@unsafe-keys reason                turn off the cluster-safety lint for this file (Config.UnsafeKeys: for every file)
//	---@coalesce [max]                    a runtime.Coalescer may merge up to max (64) concurrent calls into one run
//	---@include path.lua                  inline a shared Lua file (relative to this one) at this line,
//	--- @include "path"                   anywhere in the file; BullMQ's form, .lua optional
//
// Arg types are string, []byte, int64, float64, bool, time.Duration and
// time.Time; the two time types need a unit, ms or s, right after the type.
// After the type (and unit) an arg may state its domain: [lo,hi] for an
// int64, a float64, a time.Duration or a time.Time (in the wire unit: Unix
// ms or s for a time), or for the length in bytes of a string or []byte
// ([1,64], [1,] for non-empty: a side left out is the type's own limit, for an int64 ±2^53, what a Lua number holds exactly);
// {a|b|c} for a string one of those values. Integer bounds are within
// ±2^53. The generated method (and its Queue form) checks the value before
// anything is sent: outside, the call fails with a *runtime.BadArgError
// that matches runtime.ErrBadArg and names the script, the arg, the value
// and the range; a Queue method returns a future holding it and queues
// nothing. The reply-shape analysis takes the range as the arg's bound
// (see Numbers).
// Reply types are those scalars, T? (a nil reply is a nil *T), []T,
// map[string]string (a flat field, value, ... array), status (a status
// reply such as OK: the method returns only error), none and tuple.
// ---@return none is for a script that returns nothing, or whose reply its
// callers ignore: the method (and its Queue form, a Future[struct{}])
// returns only error, and the reply is discarded unless it is an error
// reply or a declared ---@error value (an integer other than the declared
// codes, a nil without ---@error nil, a string or an array is discarded).
// Under none the reply-shape analysis finds no return that does not fit;
// it still reports error codes Redis itself replies with, raised errors
// whose text a caller can choose, and an ---@error value no return can
// produce. An ---@error
// VALUE is an integer, nil, or an error code in capitals matched against
// the first word of an error reply (redis.error_reply('CODE detail')); not
// ERR, which the runtime drops from the front of error replies.
// With ---@status lines the method returns a named type <Script>Reply over
// int64 or string, with constants and a String method.
//
// Scripts of one package may declare the same ---@error name. When the
// value is the same and so is the description (or one of them gives none),
// they mean one failure and share one sentinel, declared in scripts.lua.go
// with a doc comment that lists every script returning it; its
// runtime.CodeError names the package ("stock") instead of one script. The
// same name with another value, or with another description, is a
// diagnostic at the later declaration naming the first ("error NoSuchSKU
// is -5 here but -2 in deduct.lua:23:11"): one sentinel has one value and
// one message, so a script that means something else needs another name.
//
// # Key families
//
// A key family says how a package's keys are built from typed parts,
// including their hash tag, so that keys sharing the tag share a slot by
// construction and no hand-written code spells a key:
//
//	---@keys SKUKeys KeysFor prefix{sku}  one SKU's keys
//	---@key stock   {sku}:stock           string counter
//	---@key orders  {sku}:orders          hash of order id → record
//	---@key latch   {sku}:latch:<owner>.<seq:int64>
//
// ---@keys names the Go struct and its constructor, then the template:
// literal text and <part>s around one hash-tag part in braces, so that a
// family lays keys out as the data a project already holds is laid out
// and adopting luagen renames nothing: BullMQ's bull:{q}:wait is
// <prefix>:{queue} with the key {queue}:wait, and {bull}:q:wait is
// {prefix}:<queue>. A name right before the tag with nothing before it
// (prefix{sku}) is a part, as <prefix>{sku} is. Every part of a family is
// a string and a parameter of the constructor, in template order:
// KeysFor(prefix, sku string) SKUKeys. A family is declared once per
// package, in any of its scripts (repeating it word for word elsewhere is
// allowed).
//
// A ---@key whose first word after the name contains '{', '}', '<' or '>'
// is a template: the family's {tag}, which stands for the family's whole
// template (prefix{sku}, bull:{q}, ...), then literal text with <part> or
// <part:int64> placeholders (strings by default). A key without
// placeholders becomes a field of the struct, filled by the constructor
// (prefix{sku}:stock); one with placeholders becomes a method of the
// struct taking them (k.Latch(owner string, seq int64) string). A key of
// one name has one layout throughout the package. For each script whose
// keys all are fields of one family, the struct gets a method named after
// the script that returns the script's Keys struct (k.Deduct() DeductKeys).
// A variadic key may have a template too (---@key ...latch
// {name}:latch:<owner>.<seq:int64>): it lays out each element, which the
// caller builds with the family's method and lists; such a script gets no
// conversion method.
//
// An ---@arg whose type word is such a template (---@arg prefix {queue}:
// the queue's key prefix) is a string the family lays out like a key, a
// field or method of the family struct beside the keys: typically the
// prefix a script appends to for keys it builds itself (prefix .. jobId),
// as BullMQ's scripts do. The cluster lint accepts such built keys (see
// Cluster-safety lint), and luatest's default key check accepts a key that
// begins with a declared key's text up to and including its hash tag.
//
// An arg the script decodes (local args = cmsgpack.unpack(ARGV[1]), or
// cjson.decode) may carry a prefix inside it, as BullMQ's add*Job scripts
// get theirs in element 1 of a msgpack array: ---@elem args[1] prefix
// {queue}: says so. The element becomes a member of the family struct like
// a prefix arg (the caller packs k.Prefix there), and the lint takes
// args[1] of a local assigned once from that decode as carrying the
// family's tag. luagen cannot check what the caller packs; luatest's key
// check does, at run time.
//
// The constructor writes the template with the tag in braces and then each
// key's suffix (prefix + ":{" + queue + "}" + ":wait"), so every key of a
// family has the same hash tag. The cluster lint uses that: a script whose
// keys are laid out in two families (two tags) is reported, since such keys
// share a slot only by chance, unless the shebang says
// allow-cross-slot-keys, and so is a key laid out in no family in a
// script with more than one key (nothing makes it share the others' slot;
// a variadic key is the caller's list and is not reported; ---@unsafe-keys
// and allow-cross-slot-keys opt out). It also reports a ---@keys type or
// constructor named like a package the generated files import, a
// predeclared Go name, init, or (in package main) main, as -new would be;
// a ---@keys template without a {tag}, with a second {…}, an unclosed { or
// <, or a stray } or >, a key template that does not start with a
// {tag}, names a tag no family has, holds a second {…} or an unclosed <,
// a part that is not a name, a Go keyword or a predeclared Go name, a part
// type other than string and int64, a family declared twice differently,
// two families with one tag part, and a key laid out two ways. The run-time
// slot check stays: Keys structs can still be filled by hand, and an empty
// tag part ("{}") is no hash tag.
//
// ---@idempotent says that running the script again with the same KEYS
// and ARGV has the effect and the reply of running it once (e.g. it records
// a request id atomically with its write and answers a repeated id with the
// first outcome). The generated ScriptSpec then sets Idempotent, and
// runtime.Script.Exec retries the call after a connection error or a
// transient error reply (LOADING, CLUSTERDOWN, ...), which it never does
// for other scripts, since a lost reply does not tell whether they ran.
//
// ---@coalesce [max] lets a runtime.Coalescer merge concurrent calls of
// the script on one hash slot into one server-side run of a companion
// script (built by runtime.NewScript from the same file), up to max calls
// (2 to 1000, default 64) per run; the generated ScriptSpec sets CoalesceLimit.
// The companion runs the code once per call, back to back, each with its
// own KEYS and ARGV and under xpcall, and returns every call's reply as it
// would have been alone. A merged call can still see what lives for the
// whole run rather than one call, so gen refuses, at the use: a script
// without a shebang (Redis would check maxmemory only at the run's first
// write), flags=allow-cross-slot-keys (merged calls must share a slot),
// redis.setresp and redis.set_repl (they change the rest of the run), SELECT
// and any redis.call or redis.pcall whose command is not a string literal
// (it could be SELECT), any other use of the global redis than redis.<name>
// with a constant name and of redis.call/redis.pcall than a direct call or
// a call through an alias the analysis follows (local c = redis.call,
// whose calls are checked as direct ones; pcall(redis.call, ...),
// rawget(redis, ...) or redis[computed] could reach the above unseen), and _G, getfenv,
// setfenv and loadstring (they reach the global KEYS and ARGV, which hold
// the whole run's), and a local function that calls itself, directly or
// through others (the run adds stack frames under every call, so a
// recursion that just fits alone would overflow merged). math.random is allowed: Redis 7.0 keeps one generator
// per server, not reseeded per run, so merged calls draw consecutive
// numbers of it as separate runs would. What stays
// different is allowed: TIME advances between calls as between separate
// runs, but keys expire as of the run's start (Redis freezes the expiry
// clock during a script), a time every merged call was in flight at; a
// deny-oom script is refused or run as a whole; the server's error
// statistics count a merged call's error as part of a successful run.
//
// # Shared Lua
//
// An include line inlines a file at generate time, since Redis runs each
// script (and each function) on its own. It is a comment on a line of its
// own, anywhere in the file: ---@include path.lua, or BullMQ's form
// --- @include "includes/name", so scripts written for BullMQ's loader
// come in unchanged. The path is relative to the file holding the line,
// with forward slashes, never absolute, quoted or not; a file name
// without an extension names a .lua file. The file is inlined right after
// the line, where it stands: a helper included after local rcall =
// redis.call sees rcall, as BullMQ's loader has it. An included file may
// include others, relative to itself. A file reached twice, directly or
// through others, is inlined once, where it is first reached; a cycle and
// a file that cannot be read are diagnostics at the include line, and so
// is a comment that reads like an include but is not taken (-- @include,
// --@include), since it would silently be a comment. Lines inside a long
// comment or a string are not include lines.
//
// [Load] reads an included file only when it is a regular file of at most
// 1 MiB inside the script's module (the directory holding the nearest
// go.mod), after resolving symbolic links: a path or a link leading out of
// the module would make the generated code depend on a file nobody
// reviews, and a named pipe or /dev/zero would hang the generator or
// exhaust its memory (and a project's CI with it).
//
// Script.Body is the combined text, so the generated body, and the SHA1
// the script cache keys it by, are of what is sent; Script.Spans map its
// lines back to the files, and the generated ScriptSpec.Lines (one
// runtime.LineRange per change of file after line 1) let a
// runtime.ScriptError name an included file's own line. The generated
// file lists the included files under "// Includes:". The checks read the
// combined text against the script's header, so a helper's KEYS[2] is the
// script's use of its second key, and report each problem at its own file
// and line; a problem inside an included file ends with "(included by
// <script>)", since it can depend on the script's header.
//
// An included file is Lua under an optional header of "---" doc lines; any
// tag other than an include, a shebang, a byte order mark and a
// top-level return (the script's code follows it) are diagnostics in it,
// and it must parse as Lua on its own (a syntax error is reported in it,
// not where the script goes on). It is told from a script by where it
// lives: [Load] takes the *.lua files directly in a directory and skips
// names starting with '_' or '.', so included files go in a subdirectory
// (lua/lock/lib/draw.lua) or start with '_'. A file that is both a script
// of the package and included by one is a diagnostic. In function mode
// each script's function holds its own copy, as under EVAL: a copy at the
// library's top level could not read the KEYS and ARGV that each
// function's callback receives as parameters.
//
// [Load] sets Source.ReadInclude to read included files from disk; [Parse]
// reads none, so an include there is a diagnostic ([ParseSource] with
// a ReadInclude reads them), and [Expand] returns the combined text alone.
//
// Go names are the annotation names in PascalCase with Go's initialisms (ttl
// → TTL, holdCount → HoldCount, sku_id → SKUID); since '_' is dropped, a
// name must still start with a letter without it ("_" and "_2fa" are
// errors). Every generated package-level name (<Script>Keys, <Script>Args,
// <Script>Script, tuple types, Err sentinels, status constants) must be
// unique in the package, as must script names and output file names;
// collisions are reported at the tag that caused them. The names declared
// at top level by the package's hand-written Go files ([Config.GoFiles]:
// not those with a "// Code generated" first line, nor an external _test
// package) count too: one a script generates is reported at the script,
// one luagen declares itself, or a generated file imports a package
// under, at the Go file. Output file names
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
// script never reads (unless an ---@unused line keeps one: callers still
// pass it; such a line naming a key or arg the script does read, or none,
// is a diagnostic too), a read of a global that neither a local in scope,
// an include before it nor Redis' Lua defines (a missing or misplaced
// include, a typo: Redis fails the call with "Script attempted to access
// nonexistent global variable"; the globals are those pairs(_G) lists on
// redis-server 7.0), replies that do not fit the header (see Reply-shape
// analysis), calls of commands Redis refuses in scripts, write commands
// in a flags=no-writes script, and assignments to globals (including
// function name() ... end): Redis 7 makes a script's globals read-only, so
// they fail at run time ("Attempt to modify a readonly table"), while KEYS
// and ARGV, parameters in a merged run and in function mode, would take the
// assignment there. It also reports functions Lua 5.1 would refuse to
// compile as the script runs: more than 200 locals in scope at once
// (LUAI_MAXVARS; a for loop adds 3 hidden ones, a function(...) one, arg,
// and so does the runtime's wrapper when the body's text contains "...")
// or more than 60 upvalues (LUAI_MAXUPVALUES: each local of an enclosing
// function used in it or in a function nested in it, counted once).
// Under ---@coalesce the companion makes the body a function of KEYS and
// ARGV (2 more locals; a nested function reading them gets each as one more
// upvalue), and so does function mode's callback for upvalues; Generate
// with Config.Functions reports what only function mode exceeds, since a
// library that fails FUNCTION LOAD fails for every script in it.
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
// name is a string literal (called directly or through an alias: see
// below), the lint finds the key arguments from the
// command's Redis 7 key specifications (internal/commands, generated from
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
// A key laid out in a family, and an ---@arg laid out in one (a key
// prefix), carries the family's hash tag, and so does text appended to
// either (prefix .. jobId, jobKey .. ':logs', through locals): such a key
// shares the family's slot by construction and is accepted. What a
// concatenation is appended to decides: the message of a reported one says
// whether that was a reply, a key laid out in no family, ARGV, or a value
// the analysis cannot trace (a table field such as a msgpack-decoded
// argument, a function's result).
//
// A key read from data is accepted where an if proves it in the family:
// in the then-block of prefix == baseKey (the else-block of ~=, through
// and, or and not as Lua evaluates them), where baseKey is a key or a
// prefix laid out in a family and prefix is a local or parameter never
// assigned again, or a prefix of one (string.sub(s, 1, n) or s:sub(0, n),
// or a local function whose body is only return string.sub(param, 0,
// ...), BullMQ's getJobKeyPrefix), s and text appended to it begin with
// the family's tag. So BullMQ's removeJobKeys(parentKey) under
// if parentPrefix == baseKey is accepted, and the same call in the else
// block, a parent in another queue, is reported.
//
// The parameters of a local function (local function f, local f =
// function, or a local declared bare and assigned a function once, as a
// pair of recursive helpers is) take the worst of what its calls pass
// there, so BullMQ's helpers that receive the queue's prefix are checked
// against what each script passes. A function used other than by calling
// it (passed on, stored) leaves its parameters unknown, and one never
// called reaches no command. A branch every call switches off is dead: an
// if whose condition is a parameter (or an and of one) that every live call
// passes nil or false for, or nothing, directly or through a parameter that
// is itself always so (removeParentDependencyKey(jobKey, false, nil, ...)
// takes neither its parent's nor its hard branch); calls in it add nothing
// to the cluster lint. This is not followed per call: a parameter's value
// is the worst any live call passes, even one that switches the branch
// using it off.
//
// The analysis follows aliases of redis.call and redis.pcall: a local
// assigned once, where it is declared (local rcall = redis.call), stands
// for it in every check (cluster keys, reply shapes, raised errors,
// commands refused in scripts, writes under no-writes), in the script, in
// functions that capture it, and in included helpers. A use it cannot
// follow is a diagnostic rather than a silent gap: redis.call or an alias
// passed on or stored (pcall(redis.call, ...)), an alias assigned again,
// redis itself used other than as redis.<name>, and redis[computed].
//
// ---@unsafe-keys reason turns the lint off for one script, and so does
// [Config.UnsafeKeys] for every script of a package (luagen generate
// -unsafe-keys on its go:generate line): its keys are the callers'
// business, since the scripts run on one node or their callers keep each
// call's keys on one slot. The flag acts as that line would in each
// script: no report of a key built in Lua, read from ARGV or from a reply,
// and none of plain keys that nothing makes share a slot (see Key
// families); a script that also has the line is accepted as it is (the
// line must still give its reason). Commands refused in scripts and writes
// under no-writes are still reported, and the generated calls still check
// at run time that their keys hash to one slot. The default, without the
// flag, is cluster-safe; the flag is recorded in the generated files'
// first line, and luagen check and diff take it too.
//
// The lint cannot see: table fields, the results of user-defined
// functions, and parameters of functions that are not locals or are used
// other than by calling them (all unknown: never reported alone, and a key
// appended to one is reported as built in Lua); a command name that is not
// a literal; keys named by patterns (SORT
// BY/GET, which the server's key specs also leave open); or a numkeys that
// is not a literal (only the first key after it is checked). Columns come
// from matching the masked source line (gopher-lua gives lines only), so
// two identical constructs on one line are told apart by order.
//
// # Reply-shape analysis
//
// Redis converts a script's Lua reply by fixed rules (src/script_lua.c,
// checked against redis-server 7.0 by TestRedisReplyConversions): a number
// becomes an integer, truncated toward zero (3.7 → 3); true becomes 1;
// false and nil become a nil reply; a table with a string err field an
// error reply, one with ok a status reply, any other an array of its
// elements up to the first nil (a false element is a nil element). The
// analysis works out what each return of the main chunk can send and
// reports, at the return (or the header line):
//
//   - a number that is not, or may not be, an integer (3.7, x * 1.5, a / b)
//     under an integer, time or float64 type: return tostring(x) (float64
//     decodes from a string) or round it, or, for an integer or time type,
//     say that Redis' truncation is meant with the word truncated after
//     the type (---@return int64 truncated, []int64 truncated, ---@field
//     half int64 truncated); a number beyond 2^53 is reported all the same;
//   - a false or nil the script writes itself (false, nil, a comparison,
//     not, an empty return) where neither a T? return nor ---@error nil
//     takes a nil reply; "return false" under bool;
//   - ---@error nil, 0 or 1 with ---@return bool (false is sent as nil,
//     true as 1, so they collide), and ---@return bool?;
//   - a table constructor with an element that may be nil before the last
//     one (or anywhere in a tuple), under []T, map[string]string or a tuple:
//     Redis cuts the array there; a false element under a non-bool type;
//     tonumber(ARGV[n]) of a string or []byte ---@arg counts as maybe nil
//     there (nil for text that is not a number: write tonumber(x) or 0);
//   - under map[string]string, a command reply of single values rather
//     than field, value pairs (HMGET, MGET, LRANGE, SMEMBERS, ZRANGE
//     without WITHSCORES, TIME, SMISMEMBER: HMGET a b of a hash a=1 b=2
//     would arrive as map[1:2]), and a table constructor with an odd
//     number of elements, none of which may be nil;
//   - the elements of a command's array reply under []T or a tuple's
//     fields when they cannot decode: bulk strings (LRANGE, HGETALL,
//     SMEMBERS, TIME, ZRANGE ... WITHSCORES, ...) under bool, integers
//     (SMISMEMBER) under string types (an integer or time type decodes
//     integer text, so TIME's elements and a list of ids fit []int64, and
//     other text is a *runtime.DecodeError at run time);
//   - under an integer or time type, a number that may not arrive as the
//     integer it is (see Numbers): a Lua number is a double, exact only up
//     to 2^53, and Redis sends one beyond int64, or NaN, as
//     -9223372036854775808: a literal from 2^53 on, folded arithmetic that
//     overflows or is NaN, a power ^ of anything but literals, the
//     caller's text (a string ---@arg) through tonumber, and bounded
//     arithmetic whose bound passes 2^53. The message leads with the
//     header line that fixes it: a range on the arg the number comes from
//     (---@arg burst int64 [0,1000000] ...), or a return type that can
//     carry it;
//   - a number written as text (.., tostring, string.format's %s,
//     cjson.encode) that may reach 1e14 or carry a fraction, anywhere in
//     the script: Lua 5.1 writes numbers with %.14g, so 1e15 becomes
//     "1e+15" and 1/3 "0.33333333333333", which the next reader takes for
//     another number; write string.format('%d', x). (redis.call's own
//     arguments are written with %.17g and are exact.)
//   - under an integer or time type, a string the script writes that
//     cannot be integer text ("12.5", 'n:' .. x): these types decode an
//     integer reply or integer text, all 64 bits of it, so a number kept
//     as text (HGET of a counter, a Unix time in ms) is returned as it is,
//     without tonumber's rounding past 2^53; an integer literal that
//     neither the return type nor an ---@error covers (under status, []T,
//     a tuple, string, or a bool other than 0 and 1; under int64 every
//     integer is covered); an array under a single-value type; a tuple
//     constructor whose length differs from its ---@field lines;
//   - an error reply with a literal code that no ---@error declares;
//   - an ---@error value that no return can produce, only when the value
//     of every return is known (and, for an error code, the script calls
//     neither redis.call, whose errors become the script's, nor error()
//     nor assert);
//   - error codes Redis itself sends (internal/replycode: NOSCRIPT, MOVED,
//     ASK, BUSY, LOADING, TRYAGAIN, CLUSTERDOWN, READONLY, MASTERDOWN,
//     NOREPLICAS, OOM, NOAUTH, ..., also after "ERR "), in an ---@error
//     line or in a literal redis.error_reply / {err=...} / raised text
//     anywhere in the script: the runtime takes NOSCRIPT for a missing
//     script and runs it again, cluster clients follow MOVED and ASK, the
//     rest are retried (the runtime marks a returned one so that its own
//     callers get it as sent; other clients of the script do not);
//   - error(...) whose text a caller can choose: a table whose err is not
//     a literal (error({err=ARGV[1]})), a value that may be a table
//     (error(t)), a non-literal text raised at level 0 (error(s, 0)). A
//     raised error bypasses the runtime's mark (runtime/wire.go: wrapping
//     error would move the frame Redis' error handler reads the line
//     from), and clients still read its first word: a MOVED there makes a
//     cluster client send the script again. Return redis.error_reply(...)
//     instead. A string raised at level 1 is fine (Lua puts
//     "user_script:N: " in front), and so is assert's message (Lua puts
//     the caller's position in front of it too);
//   - every other way to raise: error used as a value (local raise =
//     error, pcall(error, ...)), _G (but _G.name with a literal name other
//     than error) and loadstring, each of which could raise a text the
//     check above never sees. With these, no script that passes check can
//     raise a text whose first word a client or the runtime acts on.
//
// It follows literals, arithmetic (folding literal operands: 1.5 * 2 is
// 3), #x, .., comparisons, not, and/or (with Lua's truthiness), tonumber
// (taken to succeed), tostring, math.floor/ceil/min/max/abs, string.* builders,
// redis.error_reply/status_reply, table constructors, KEYS[n] and ARGV[n],
// locals through every value assigned to them, local functions the
// script only calls (a call's value is what the function's returns give;
// its parameters take what the calls pass, so local function num(i)
// return tonumber(ARGV[i]) end called as num(1) and num(2) reads ARGV[1]
// and ARGV[2]; recursion adds nothing), ARGV[i] for an i whose values are
// literals, and redis.call/pcall (directly or through an alias) of
// common commands (replyshape.go's commandReplies: INCR, DEL, HINCRBY, ...
// give integers, GET and HGET a string or false, MSET and SET without
// options a status; pcall adds an error). For array replies it knows the
// elements, checked with redis-cli on redis-server 7.0.15: LRANGE,
// SMEMBERS, HKEYS, HVALS, TIME give bulk strings; MGET, HMGET, ZMSCORE
// bulk strings or nil elements (values only); HGETALL, ZRANGE, ZREVRANGE,
// ZRANGEBYSCORE, ZREVRANGEBYSCORE with a literal WITHSCORES and
// HRANDFIELD with WITHVALUES field, value pairs of bulk strings;
// SMISMEMBER integers. When an argument it cannot read (ARGV[n], a
// variable) stands where WITHSCORES or WITHVALUES may be, the reply is
// unknown.
//
// It cannot see, and stays silent about: parameters and results of
// functions used other than by calling them (passed on, stored), globals,
// table fields, results of commands not in the table (all unknown); a false or nil reply or element that comes from data
// (GET, HGET, MGET, HMGET of a missing key under string or []string:
// whether the key exists is not in the code, and read-only getters rely on
// other scripts having written it; the caller gets a *runtime.DecodeError
// when it is missing, and ---@return T? or a default (v or an empty string) avoid it); tonumber of
// anything but a string ARGV (taken to succeed); tables kept in
// a local (they may be changed before the return); values of a local
// assigned more than once (the analysis ignores statement order, so an
// earlier value may be overwritten: such values count for "can produce"
// but are never reported, except a number that may be inexact, which is
// one on some path whatever the order); error messages that are not
// literal (a code read from ARGV); and scripts that call redis.setresp
// (RESP3 replies follow other rules: false is a boolean).
//
// # Numbers
//
// What the analysis bounds. A Lua 5.1 number is a double: exact for every
// integer up to 2^53, and for a value carrying a fraction of denominator
// 2^k (x * 1.5: k = 1) exactly enough for floor, ceil and Redis'
// truncation up to 2^53/2^k. The analysis gives a number an interval and
// the fraction bits it may carry, from
//
//   - literals;
//   - the declared type of an ---@arg the script turns into a number
//     (tonumber(ARGV[n]) through locals, reassignments and helpers, ARGV[n]
//     in arithmetic or math.*, which Lua coerces, and a numeric
//     string.format specifier): its ---@arg range; else a time.Duration by
//     its unit (±2^63 ns: ±9223372036854 ms, ±9223372036 s), a time.Time
//     the same (its method checks it), a bool 0 or 1, and an int64 by the
//     bound its method checks (below);
//   - + - * / %, unary minus, math.floor, ceil, min, max and abs of
//     bounded numbers (a quotient of integers floors exactly while the
//     dividend is within 2^53; a quotient multiplied again does not: divide
//     last);
//   - locals from unpack(ARGV) and the values of ipairs(ARGV) (bounded by
//     every arg's type), and a local assigned once from a global function
//     or a library's field (local tn = tonumber, local m = math, local fmt =
//     string.format), followed as that function;
//   - math.huge and literals past the double range (1e309) are inf, and a
//     bound that overflows to inf (a product of a thousand factors) is
//     reported like any other;
//   - the variable of a numeric for (between its start and its limit),
//     math.fmod, modf, random and sqrt, bit.* (a 32-bit integer), and the
//     later values of a local function's return (local a, b = f());
//   - a decimal literal with no exact binary form (0.7, 1.1) makes floor,
//     ceil and truncation unsure: floor(90 * 0.7) is 62, write x * 7 / 10;
//   - a call the analysis cannot see into (a function in a table, a
//     method, pcall of a function, a reassigned local function) given the
//     caller's number gives a number nothing bounds, and so does tonumber
//     of text made from the caller's (ARGV[1] .. '000').
//
// Where a number becomes text: .., tostring, string.format's %s and
// cjson.encode write it with %.14g (reported from 1e14, or with a
// fraction); string.format's %d, %x, %o, %c and %f write the integer the
// double holds (reported past 2^53; a fraction is dropped as meant); %g
// and %e keep 6 significant digits or their precision (reported from
// 10^precision, %.17g is exact); a number passed to redis.call is written
// with %.17g (reported past 2^53, and 1e17 is written 1e+17). The caller's
// text made a number and passed straight to a command is the command's
// to parse, and not reported there.
//
// A divisor that is the caller's number and whose range holds 0 (x / b,
// x % b) gives inf or nan, which Redis replies as -9223372036854775808 and
// tostring writes "inf": reported with the range less 0, unless the
// script compares the local with 0 or bounds it from below by a positive
// literal somewhere (if b <= 0 then return end). tonumber(ARGV[n], base)
// in a base other than 10 is not the number the method checks, and is
// reported wherever it may go wrong.
//
// The analysis does bounded work: values are deduplicated and
// expressions memoized, so helper chains and long scripts take time
// linear in their size (BullMQ's largest script takes about 500 steps);
// a script that still exhausts the 200,000-step bound (locals feeding
// each other in a loop) is reported, never passed silently.
//
// A local assigned arithmetic on itself in a loop or a closure (s = s + a
// in a loop; acc = acc * k in a closure) runs again and again, so its value
// has no bound the analysis can see, and reaching a reply or text it is
// reported. In the function that declares it and outside loops (if unit ==
// 's' then ttl = ttl * 1000 end) it runs at most once, and up to eight such
// updates are applied in every order to what the local holds otherwise. A counter stays an exact integer: x = x + y or x - y with y an
// integer literal or one bounded within ±2^20, or a number the analysis
// trusts or cannot see (a loop variable); a script would need 2^33 steps
// to leave 2^53. Declare a range on the args summed to keep such a sum
// exact (---@arg ...xs int64 [0,1000000]).
//
// Numbers the server computes (INCR, LLEN, ZCARD, ... replies, #x,
// tonumber of a stored value) are exact integers with no bound of their
// own: in arithmetic with a bounded number they add nothing to its bound,
// so INCRBY's reply - 1 is exact. That is a trust, not a proof: a count
// times the caller's number (INCR's reply * n) is bounded by n alone, and
// a count used as a divisor may be 0. The caller's text (a string ---@arg)
// made a number has no bound and may carry a fraction.
//
// The caller's numbers are checked. An int64 ---@arg the script turns
// into a number, without a range, is checked by its generated method
// against ±B, where B is the largest power of two from 2^53 down to 2^31
// under which no reply and no text of the script goes wrong: 2^53 when the
// script only compares or returns it, 2^52 for limit - n - 1, 2^43 for
// n * 1000, 2^46 for 'n:' .. n. A script that needs less than 2^31 is
// reported, with the range to declare. A time.Time the script converts is
// checked against ±9223372036854 ms (or ±9223372036 s), an arg with a
// range against its range. Outside, the method returns a
// *runtime.BadArgError (errors.Is runtime.ErrBadArg) naming the arg, the
// value and the bound, and sends nothing; a Queue method returns a future
// holding it and queues nothing. The Args struct's field documents the
// bound. An arg the script passes on as text (INCRBY's increment) is not
// converted and not checked.
//
// What it refuses: a number that may be inexact where it reaches the
// caller under an integer type, or where it is written as text (see the
// list above), with the header line that fixes it first; a power ^ of
// non-literals; the caller's text made a number without a declared number
// type; a local function that returns the caller's number and is also
// used other than by calling it (pcall(num, 1)), since what is done with
// the number there is not followed. What it does not follow is silent, as listed above: a helper used
// as a value, a table field, tonumber of stored data, a script's own
// guard (if n > 1000 then ... end narrows nothing; tonumber('nan') passes
// every comparison).
//
// # Output
//
// For each script, <file>.lua.go holds the Keys and Args structs, the
// result type, the Err sentinels (*runtime.CodeError, made with
// runtime.NewCodeError) of errors no other script declares, the func
// <Script>Script returning its *runtime.Script (body embedded verbatim;
// the variable behind it is unexported, so it cannot be replaced) and the
// method on Scripts; scripts.lua.go holds Scripts, its constructor, the
// func All (a new slice each call), Preload, the shared sentinels and the
// key families. No other file name is reserved, so a script may be called
// keys.lua or errors.lua.
// Every file starts, as sqlc's output does, with
//
//	// Code generated by <Config.Command>; DO NOT EDIT.
//	// versions:
//	//   luagen <Config.Version>
//	// Source: <script file>          (not in scripts.lua.go)
//
// and, after its imports, holds the version guard protobuf-go's generated
// files hold (N is [GenVersion]):
//
//	const _ = luagenimpl.EnforceVersion(N - luagenimpl.MinVersion)
//	const _ = luagenimpl.EnforceVersion(luagenimpl.MaxVersion - N)
//
// so that a file the runtime in the user's go.mod cannot run fails to
// build there ("constant -1 overflows luagenimpl.EnforceVersion"), not
// somewhere in its body. Decoders, encoders and call pools come from
// runtime/luagenimpl, which is for generated code only; the types a user
// holds (Script, Batch, Future, Value, the errors) from runtime.
//
// Nothing in the output depends on time or absolute paths.
package gen
