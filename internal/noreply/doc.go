// Package noreply holds scripts written as BullMQ writes its own (issue
// 32): plain keys that callers keep on one slot with the queue's hash tag
// (bull:{q}:wait), a key built inside the script from a declared key's
// prefix, and a reply callers ignore. It is the repository's own user of
// ---@return none (the methods return only error; a declared ---@error
// value still fails the call) and of luagen generate -unsafe-keys (no
// ---@unsafe-keys line in each script). Its tests call the generated
// methods on luatest, with its default KEYS check, and on redis-server
// through both executors.
package noreply

//go:generate go tool luagen generate -unsafe-keys .
