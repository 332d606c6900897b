package gen

import rediscmd "github.com/luagen/luagen/internal/commands"

// commandInfo is what the linter knows of one Redis command (or
// "command|subcommand"), taken from the server's COMMAND reply through the
// shared table of internal/commands.
type commandInfo struct {
	write       bool // flag "write": refused in a no-writes script
	noScript    bool // flag "noscript": refused in any script
	subcommands bool // look up "name|sub" for the first argument
	specs       []keySpec
}

// keySpec is one Redis key specification
// (https://redis.io/docs/latest/develop/reference/key-specs/). Indexes count
// the command name as 0, exactly like redis.call's arguments after it.
type keySpec struct {
	notKey  bool // the argument is routed like a key but is not one (SPUBLISH's channel)
	unknown bool // the server cannot describe it (SORT's BY/GET patterns): not checked

	// begin_search: index, or the argument after keyword found scanning
	// from startFrom (negative: from the end, backwards).
	index     int
	keyword   string
	startFrom int

	// find_keys range: keys from the start up to lastKey (relative; -1 is
	// the last argument), every keyStep; limit > 1 keeps 1/limit of them.
	lastKey, keyStep, limit int
	// find_keys keynum: the argument at keyNumIdx holds the count, keys
	// begin at firstKey (both relative to the start).
	keyNum              bool
	keyNumIdx, firstKey int
}

// commands holds, for every command of the server, whether it writes, whether
// scripts may call it, and its key specifications, read from the shared
// table (internal/commands, generated from redis-server 7.0.15).
var commands = func() map[string]commandInfo {
	m := map[string]commandInfo{}
	for _, name := range rediscmd.Names() {
		c, _ := rediscmd.Lookup(name)
		info := commandInfo{write: c.Has(rediscmd.Write), noScript: c.Has(rediscmd.NoScript), subcommands: c.Subcommands}
		for _, s := range c.Specs {
			info.specs = append(info.specs, keySpec{
				notKey: s.NotKey, unknown: s.Unknown, index: s.Index, keyword: s.Keyword, startFrom: s.StartFrom,
				lastKey: s.LastKey, keyStep: s.KeyStep, limit: s.Limit, keyNum: s.KeyNum, keyNumIdx: s.KeyNumIdx, firstKey: s.FirstKey,
			})
		}
		m[name] = info
	}
	return m
}()
