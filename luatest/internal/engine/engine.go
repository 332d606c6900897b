// Package engine is the door between luatest's keyspace and its wire
// server (package luatest/server): the few things a server of many
// connections needs that a *luatest.Redis does not offer to tests. It
// keeps them out of luatest's public API; luatest sets [Of] when it is
// initialised.
package engine

import "github.com/luagen/luagen/luatest/resp"

// Engine runs commands for the connections of a wire server. All its
// methods are safe for concurrent use; like the real server it runs one
// command at a time.
type Engine interface {
	// Do runs args for a client speaking proto (2 or 3) whose selected
	// database is *db, and leaves in *db the database selected after it
	// (SELECT changes it). The database tests see through Do and Command
	// is not changed.
	Do(db *int, proto int, args []string) resp.Reply
	// Atomic runs fn while no other command runs; do is Do for use inside
	// fn (Do itself would wait for fn forever). MULTI's EXEC runs its
	// commands this way.
	Atomic(fn func(do func(db *int, proto int, args []string) resp.Reply))
	// Check returns the error the server answers before running args at
	// all (an unknown command or subcommand, a wrong number of
	// arguments), as MULTI checks the commands it queues; ok when there is
	// none.
	Check(args []string) (reply resp.Reply, ok bool)
	// Observe makes o see every change of the keyspace and every message
	// published, from then on; nil stops it. There is one observer at a
	// time.
	Observe(o Observer)
	// Match reports whether s matches the glob-style pattern as the
	// server's stringmatchlen does (KEYS, PSUBSCRIBE, CONFIG GET). It
	// takes no lock.
	Match(pattern, s string) bool
}

// Observer sees what other connections wait for. Its methods are called
// while the engine runs a command, so they must not call the engine.
type Observer interface {
	// Touched reports that a write command (or a script's command) may
	// have changed key in database db; key "" stands for every key of
	// db, and db -1 for every database (FLUSHALL, SWAPDB).
	Touched(db int, key string)
	// Publish delivers a message PUBLISH (shard false) or SPUBLISH sent
	// to channel, from a client or a script, and returns how many
	// subscribers received it (the command's reply).
	Publish(shard bool, channel, message string) int64
}

// Of returns the Engine of a *luatest.Redis (given as any, since package
// luatest imports this one). Package luatest sets it.
var Of func(r any) Engine
