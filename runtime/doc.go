// Package runtime runs Redis Lua scripts for the packages luagen generates
// and for wrappers written by hand: it owns everything a wrapper needs that
// is not specific to one script. What only generated code calls (reply
// decoders, argument encoders, call-buffer pools, the version guard) lives
// in package [github.com/luagen/luagen/runtime/luagenimpl], whose API may
// change with every luagen version.
//
//   - [Script] holds one script's body and SHA1 and runs it with EVALSHA,
//     falling back to EVAL when the server answers NOSCRIPT (after a restart,
//     SCRIPT FLUSH or a failover), so NOSCRIPT never reaches a caller. The
//     body is sent wrapped ([Script.Body]) so that an error reply the script
//     returns itself is never taken for the server's NOSCRIPT, nor by a
//     client for a MOVED, ASK, TRYAGAIN or other code it acts on: no script
//     runs twice in one call.
//   - [Executor] is the narrow interface a script runs on. [NewRueidisExecutor] adapts a
//     rueidis.Client (single node, sentinel or cluster; on a cluster a
//     script without keys goes to the primary of its SHA1's slot, never to a
//     replica, and keys of several slots are a [*CrossSlotError], never a
//     panic); package runtime/goredis adapts a go-redis v9 client with the
//     same rules, in its own package so that a program using only rueidis
//     never compiles go-redis; luatest implements it offline.
//   - [Library] compiles a package's scripts into one Redis function
//     library (luagen generate -functions). Its scripts then call FCALL on a
//     [FunctionExecutor] (rueidis, go-redis, luatest), load the library on
//     "Function not found" and call again, and keep EVALSHA/EVAL on any
//     other executor. A library is named by its package and a hash of its
//     scripts, so builds from different scripts load side by side and each
//     calls its own (a rolling deploy, a rollback); a load keeps the
//     [LibraryVersionsKept] most recently loaded versions of a package, and
//     a call whose library is gone loads it again or runs the script with
//     EVALSHA/EVAL, so no call fails for what the server's libraries hold.
//   - Nothing is resent after a lost reply, except scripts declared
//     ---@idempotent: [Script.Exec] retries those after an [IsTransient]
//     failure, a bounded number of times and never past the caller's context.
//   - [Batch] sends many calls (generated QueueName methods, [Queue]) in one
//     round trip per node through an executor that implements the optional
//     [Pipeliner] (as FCALL for a library's scripts on a [FunctionExecutor]);
//     each call's typed result and error come back in its [Future], under
//     the rules of [Script.Exec] applied per call.
//   - [Coalescer] ([NewCoalescer]) merges concurrent calls of a script whose
//     header says ---@coalesce, on one hash slot, into one server-side run
//     of its companion script ([Script.Companion]), each call with the
//     reply it would get alone; bounded per run in calls, bytes
//     ([CoalesceMaxBytes]) and server time ([CoalesceRunBudget]).
//   - [Slot] and [CheckSlots] implement Redis Cluster key hashing
//     (CRC16/XMODEM of the key or its {hash tag}, modulo 16384) so a call whose
//     keys span hash slots fails with [*CrossSlotError] before any round trip.
//   - [Value] is a decoded reply; a generated method turns it into the Go
//     type its header declares, with a [*DecodeError] when the shape is
//     wrong.
//   - Errors are typed: [*ReplyError] (an error reply from the server),
//     [*ScriptError] (a runtime error raised inside the script, with its .lua
//     file and line), [*CodeError] (a reply the script header declared with
//     ---@error, used as a sentinel with errors.Is).
//
// Nothing in this package knows any particular script.
//
// # Scripts written by hand
//
// A script luagen does not generate (one built at run time, or kept in
// another repository) gets the same behaviour from a few lines of Go:
// declare it once with [NewScript], its declared failure replies with
// [NewCodeError] (listed in [ScriptSpec].Errors, so that [Script.Exec]
// returns the sentinel instead of the reply), run it with [Script.Exec],
// and queue it on a [Batch] with [Queue] and a decode function of your
// own that returns a [*DecodeError] for a reply of the wrong shape.
// [NewLibrary] puts such scripts into a function library, as
// luagen generate -functions does. The example shows a whole wrapper.
// Generated packages are built from the same calls.
package runtime
