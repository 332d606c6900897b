// Package luatest is an offline Redis 7.0 for tests: an in-memory keyspace
// with a virtual clock that runs Redis Lua scripts in gopher-lua with the
// replies, Lua ↔ Redis conversions and error texts of redis-server 7.0.15,
// including the cjson, bit, cmsgpack and struct libraries.
//
// A *[Redis] implements [github.com/luagen/luagen/runtime.Executor], so
// the code luagen generates runs on it unchanged. [Start] ties one to a test
// (closed when it ends); [New] is for use outside a test (call
// [Redis.Close]). Time stands still until the test moves it: [WithTime]
// sets the start, [Redis.Advance] moves the clock, and expiry, TTL and
// TIME follow it; pass [Redis.Now] wherever the code under test reads the
// time.
//
//	r := luatest.Start(t, luatest.WithTime(time.UnixMilli(1_700_000_000_000)))
//	scripts := ratelimit.New(r)
//	// ... call scripts, then
//	r.Advance(time.Second)
//
// [Redis.Set], [Redis.Get], [Redis.Do] and friends seed and inspect the
// keyspace; [Redis.FailCommand], [Redis.FailCall] and [Redis.LoseReply]
// inject faults.
//
// Scripts may call every command Redis 7.0 allows in scripts (199),
// across sixteen databases; commands the server refuses in scripts get
// its error. It also runs Redis Functions (FUNCTION LOAD/DELETE/FLUSH/
// LIST/DUMP/RESTORE, FCALL, FCALL_RO), so function-mode packages run on
// it, and DUMP/RESTORE whose payloads are byte for byte the server's
// (RDB version 10, LZF, listpack, quicklist, intset; see the README for
// hash tables). [Redis.Dump] is something else: a readable listing of the
// whole keyspace for test failures.
//
// Package github.com/luagen/luagen/luatest/server serves a Redis over
// RESP2 and RESP3 on a TCP port, so clients in any language use it as a
// redis-server; [WithWallClock] gives such a server a clock that moves by
// itself, [WithHook] a [runtime.Hook] for the calls made through the
// Executor methods.
//
// It is proven against a real server: every case of testdata/corpus runs
// on both and must give the same reply and keyspace. luatest/README.md in
// the repository lists what is covered and every known deviation from the
// server; the repository's README shows it next to redistest.
package luatest
