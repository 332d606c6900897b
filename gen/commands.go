package gen

// commandInfo is what the linter knows of one Redis command (or
// "command|subcommand"), taken from the server's COMMAND reply.
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
