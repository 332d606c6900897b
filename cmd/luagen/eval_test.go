package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The eval command itself is tested against redis-cli in
// internal/evalcmd; this checks that luagen dispatches to it.
func TestEvalSubcommand(t *testing.T) {
	dir := t.TempDir()
	script := dir + "/incr.lua"
	require.NoError(t, os.WriteFile(script, []byte("return redis.call('INCRBY', KEYS[1], ARGV[1])\n"), 0o644))
	initFile := dir + "/init.txt"
	require.NoError(t, os.WriteFile(initFile, []byte("SET counter 40\n"), 0o644))

	r := luagen(t, nil, "eval", "--init", initFile, script, "counter", ",", "2")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "(integer) 42\n", r.stdout)

	r = luagen(t, nil, "eval", script, "counter", ",", "x")
	assert.Equal(t, 0, r.code, "an error reply is printed, as redis-cli --eval does")
	assert.Equal(t, "(error) ERR value is not an integer or out of range script: "+
		"580e6155659f4567b013eddd837c4fc7b80e55a0, on @user_script:1.\n", r.stdout)

	r = luagen(t, nil, "help", "eval")
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "usage: luagen eval")
	assert.Contains(t, r.stdout, "-resp3")

	r = luagen(t, nil, "eval")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "no script file given")
}
