// Commands from https://redis.io/commands/?group=server and
// https://redis.io/commands/?group=connection

package luatest

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/luagen/luagen/luatest/resp"
)

var serverCommands = []*command{
	{name: "ping", fn: cmdPing},
	{name: "echo", fn: cmdEcho},
	{name: "time", fn: cmdTime},
	{name: "dbsize", fn: cmdDbsize},
	{name: "flushall", fn: cmdFlush},
	{name: "flushdb", fn: cmdFlush},
	{name: "hello", fn: cmdHello},
	{name: "select", fn: cmdSelect},
	{name: "info", fn: cmdInfo},
	{name: "lastsave", fn: cmdLastsave},
	{name: "swapdb", fn: cmdSwapdb},
}

// PING [message] — https://redis.io/commands/ping/
func cmdPing(c *cmdCtx, args []string) resp.Reply {
	switch len(args) {
	case 0:
		return resp.StatusReply("PONG")
	case 1:
		return resp.BulkReply(args[0])
	}
	return errArity(c.name)
}

// ECHO message — https://redis.io/commands/echo/
func cmdEcho(c *cmdCtx, args []string) resp.Reply { return resp.BulkReply(args[0]) }

// TIME — https://redis.io/commands/time/ (the virtual clock: Unix seconds
// and microseconds, as two bulk strings; with WithWallClock, the wall
// clock's time, microseconds included).
func cmdTime(c *cmdCtx, args []string) resp.Reply {
	us := c.r.now.UnixMicro()
	if c.r.wallClock {
		// The server's TIME reads the clock itself, also inside a script
		// whose other commands see the time it started at.
		us = max(us, time.Now().Add(c.r.ahead).UnixMicro())
	}
	return resp.BulkArray([]string{strconv.FormatInt(us/1e6, 10), strconv.FormatInt(us%1e6, 10)})
}

// DBSIZE — https://redis.io/commands/dbsize/
func cmdDbsize(c *cmdCtx, args []string) resp.Reply {
	return resp.IntReply(int64(len(c.r.keys("*"))))
}

// FLUSHALL [ASYNC | SYNC] — https://redis.io/commands/flushall/ and FLUSHDB.
func cmdFlush(c *cmdCtx, args []string) resp.Reply {
	if len(args) > 1 {
		return errSyntax
	}
	if len(args) == 1 {
		if m := strings.ToUpper(args[0]); m != "ASYNC" && m != "SYNC" {
			return errSyntax
		}
	}
	if c.name == "flushall" {
		for _, db := range c.r.dbs {
			clear(db)
		}
	} else {
		clear(c.r.db)
	}
	return resp.OK
}

// HELLO — https://redis.io/commands/hello/ is refused: the fake server has
// no connections; pick the protocol per call instead ([Redis.Command]).
func cmdHello(c *cmdCtx, args []string) resp.Reply {
	return resp.ErrorReply("ERR luatest: HELLO is not supported; choose the protocol per call")
}

// SELECT index — https://redis.io/commands/select/. In a script the
// database stays selected until the script ends (Redis 7.0: the caller's
// database is unchanged afterwards); through Do and Command it lasts for
// later calls, as on one connection.
func cmdSelect(c *cmdCtx, args []string) resp.Reply {
	db, bad := parseDB(args[0])
	if bad != nil {
		return *bad
	}
	c.r.selectDB(db)
	if c.run == nil {
		c.r.clientDB = db
	}
	return resp.OK
}

// SWAPDB index1 index2 — https://redis.io/commands/swapdb/
func cmdSwapdb(c *cmdCtx, args []string) resp.Reply {
	var ids [2]int
	for i, which := range []string{"first", "second"} {
		n, ok := parseInt(args[i])
		if !ok || n < math.MinInt32 || n > math.MaxInt32 {
			return resp.ErrorReply("ERR invalid " + which + " DB index")
		}
		ids[i] = int(n)
	}
	for _, id := range ids { // both parsed first, as swapdbCommand does
		if id < 0 || id >= numDBs {
			return resp.ErrorReply("ERR DB index is out of range")
		}
	}
	c.r.dbs[ids[0]], c.r.dbs[ids[1]] = c.r.dbs[ids[1]], c.r.dbs[ids[0]]
	c.r.db = c.r.dbs[c.r.dbIndex]
	return resp.OK
}

// INFO [section ...] — https://redis.io/commands/info/. Keyspace is exact
// (avg_ttl is 0: the server samples it in its expiry cycle); the other
// sections answer plausible values for a fresh standalone 7.0.15 server.
func cmdInfo(c *cmdCtx, args []string) resp.Reply {
	order := []string{"server", "clients", "memory", "persistence", "stats", "replication", "cpu", "modules", "commandstats", "errorstats", "cluster", "keyspace"}
	want := map[string]bool{}
	for _, a := range args {
		switch a = strings.ToLower(a); a {
		case "all", "everything", "default":
			for _, s := range order {
				want[s] = a != "default" || s != "commandstats"
			}
		default:
			want[a] = true
		}
	}
	if len(args) == 0 {
		for _, s := range order {
			want[s] = s != "commandstats" // not in the default sections
		}
	}
	var b strings.Builder
	for _, sec := range order {
		if !want[sec] {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString("# " + strings.ToUpper(sec[:1]) + sec[1:] + "\r\n")
		for _, line := range c.r.infoSection(sec) {
			b.WriteString(line + "\r\n")
		}
	}
	return resp.BulkReply(b.String())
}

func (r *Redis) infoSection(sec string) []string {
	switch sec {
	case "server":
		return []string{"redis_version:" + redisVersion, "redis_git_sha1:00000000", "redis_git_dirty:0",
			"redis_mode:standalone", "os:luatest", "arch_bits:64", "process_id:1", "tcp_port:6379",
			fmt.Sprintf("server_time_usec:%d", r.now.UnixMicro()), "uptime_in_seconds:0", "uptime_in_days:0", "hz:10", "configured_hz:10"}
	case "clients":
		return []string{"connected_clients:1", "blocked_clients:0", "tracking_clients:0"}
	case "memory":
		return []string{"used_memory:1000000", "used_memory_human:976.56K", "maxmemory:0", "maxmemory_human:0B", "maxmemory_policy:noeviction"}
	case "persistence":
		return []string{"loading:0", "async_loading:0", "rdb_changes_since_last_save:0", "rdb_bgsave_in_progress:0", "aof_enabled:0"}
	case "stats":
		return []string{"total_connections_received:1", "total_commands_processed:0", "expired_keys:0", "evicted_keys:0", "keyspace_hits:0", "keyspace_misses:0"}
	case "replication":
		return []string{"role:master", "connected_slaves:0", "master_repl_offset:0"}
	case "cpu":
		return []string{"used_cpu_sys:0.000000", "used_cpu_user:0.000000"}
	case "cluster":
		return []string{"cluster_enabled:0"}
	case "commandstats":
		names := make([]string, 0, len(r.cmdStats))
		for n := range r.cmdStats {
			names = append(names, n)
		}
		slices.Sort(names)
		out := make([]string, len(names))
		for i, n := range names {
			st := r.cmdStats[n]
			out[i] = fmt.Sprintf("cmdstat_%s:calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=0,failed_calls=%d",
				n, st.calls, st.usec, float64(st.usec)/float64(st.calls), st.failed)
		}
		return out
	case "keyspace":
		var out []string
		for i := range r.dbs {
			keys, expires := 0, 0
			for k, e := range r.dbs[i] {
				if e.expireAt != 0 && r.nowMs() > e.expireAt {
					continue
				}
				_ = k
				keys++
				if e.expireAt != 0 {
					expires++
				}
			}
			if keys > 0 {
				out = append(out, fmt.Sprintf("db%d:keys=%d,expires=%d,avg_ttl=0", i, keys, expires))
			}
		}
		return out
	}
	return nil
}

// cmdStat is one command's line of INFO commandstats.
type cmdStat struct{ calls, usec, failed int64 }

// countCall adds a run of command name (a subcommand as "config|get") to
// INFO commandstats: clients' commands and scripts' alike, as call() in
// server.c counts them; failed when it answered an error.
func (r *Redis) countCall(name string, d time.Duration, failed bool) {
	st := r.cmdStats[name]
	if st == nil {
		if r.cmdStats == nil {
			r.cmdStats = map[string]*cmdStat{}
		}
		st = &cmdStat{}
		r.cmdStats[name] = st
	}
	st.calls++
	st.usec += d.Microseconds()
	if failed {
		st.failed++
	}
}

// CONFIG RESETSTAT | HELP — https://redis.io/commands/config-resetstat/:
// RESETSTAT empties INFO commandstats. CONFIG GET and SET are the wire
// server's (package luatest/server); here, and in scripts, which may not
// call CONFIG, the help.
func cmdConfig(c *cmdCtx, args []string) resp.Reply {
	if strings.EqualFold(args[0], "resetstat") && len(args) == 1 {
		clear(c.r.cmdStats)
		return resp.OK
	}
	return helpReply(c.name)
}

// LASTSAVE — https://redis.io/commands/lastsave/ (the virtual clock's
// start: luatest never saves).
func cmdLastsave(c *cmdCtx, args []string) resp.Reply {
	return resp.IntReply(c.r.now.Unix())
}
