// Package plain is the plain script of the client-cost benchmark: take.lua
// (GET, DECRBY, SETEX, no shebang) and the same script with a "#!lua"
// shebang, with their generated wrappers. Its test measures the wrappers
// against raw rueidis Lua.Exec and go-redis Script.Run in one run, round by
// round, and prints the ratios; see plain_test.go.
package plain

//go:generate go tool luagen generate .
