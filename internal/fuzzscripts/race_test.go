//go:build race

package fuzzscripts_test

// raceEnabled: the race detector is on, and sync.Pool drops a quarter of
// what it is given (sync/pool.go), so a pooled buffer costs a quarter of an
// allocation per call.
const raceEnabled = true
