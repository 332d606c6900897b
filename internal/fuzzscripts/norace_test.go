//go:build !race

package fuzzscripts_test

const raceEnabled = false
