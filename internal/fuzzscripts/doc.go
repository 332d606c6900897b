// Package fuzzscripts holds scripts that exist to be fuzzed: their
// generated methods take every argument type luagen has, variadic keys and
// args, and replies chosen by the caller (an error reply saying NOSCRIPT
// included), and one declares flags=allow-cross-slot-keys; Keep and Tally,
// whose keys and args have a fixed length, are methods that recycle their
// call buffers (luagenimpl.CallPool). The fuzz targets
// in its tests drive them on a Redis Cluster and on luatest: no panic,
// every error typed, every call runs its script at most once.
package fuzzscripts

//go:generate go tool luagen generate .
