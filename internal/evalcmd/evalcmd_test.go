package evalcmd_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/internal/evalcmd"
	corpus "github.com/luagen/luagen/internal/luacorpus"
	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/luatest/resp"
	"github.com/luagen/luagen/redistest"
)

type result struct {
	stdout, stderr string
	code           int
}

func run(args ...string) result {
	var out, errb bytes.Buffer
	code := evalcmd.Run(args, &out, &errb)
	return result{out.String(), errb.String(), code}
}

func redisCli(t *testing.T, args ...string) result {
	t.Helper()
	cmd := exec.Command("redis-cli", args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err, "redis-cli must be installed (it comes with redis-server)")
	}
	return result{out.String(), errb.String(), code}
}

// TestOutputMatchesRedisCli runs every corpus case through `luagen eval`
// offline, through `luagen eval --redis`, and through `redis-cli --no-raw
// --eval` against a real server seeded the same way, and requires
// byte-identical stdout and the same exit status. Cases whose seeding is
// meant to fail (checked in TestDifferential) and cases with a documented
// message deviation are left out.
func TestOutputMatchesRedisCli(t *testing.T) {
	cases, err := corpus.Load("../../luatest/testdata/corpus", luatest.SplitArgs)
	require.NoError(t, err)
	srv := redistest.Start(t)
	conn, err := resp.Dial(srv.Addr, 2, 10*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	dir := t.TempDir()
	compared := 0
	for i, tc := range cases {
		if tc.Deviation != corpus.None || tc.Library || initFails(tc) {
			continue
		}
		script := filepath.Join(dir, "case"+strconv.Itoa(i)+".lua")
		require.NoError(t, os.WriteFile(script, []byte(tc.Script), 0o644))
		initFile := filepath.Join(dir, "case"+strconv.Itoa(i)+".init")
		require.NoError(t, os.WriteFile(initFile, []byte(strings.Join(tc.InitLines, "\n")+"\n"), 0o644))
		words := append(append(append([]string{}, tc.Keys...), ","), tc.Args...)

		seed := func() {
			_, err := conn.Do("FLUSHALL")
			require.NoError(t, err)
			for _, c := range tc.Init {
				_, err := conn.Do(c...)
				require.NoError(t, err)
			}
		}
		seed()
		cli := []string{"-p", strconv.Itoa(srv.Port), "--no-raw"}
		// A generous timeout: the race detector slows the context-checking
		// interpreter loop down a lot (the default is 10 s).
		// Some cases call a script with the wrong number of keys or args
		// on purpose, to compare the error.
		flags := []string{"--init", initFile, "--timeout", "5m", "--any-arity"}
		if tc.RESP3 {
			cli = append(cli, "-3")
			flags = append(flags, "--resp3")
		}
		want := redisCli(t, append(append(cli, "--eval", script), words...)...)
		// luagen eval inlines a file's ---@include files itself; redis-cli
		// runs the text the corpus inlined them into, as luagen sends it.
		evalScript := script
		if tc.ScriptFile != "" {
			evalScript = tc.ScriptFile
		}
		got := run(append(append(flags, evalScript), words...)...)
		if got.stdout != want.stdout || got.code != want.code {
			t.Errorf("%s %q: luagen eval differs from redis-cli:\nredis-cli (exit %d):\n%s%s\nluagen eval (exit %d):\n%s%s",
				tc.File, tc.Name, want.code, want.stdout, want.stderr, got.code, got.stdout, got.stderr)
		}
		_, err := conn.Do("FLUSHALL")
		require.NoError(t, err)
		viaServer := run(append(append([]string{"--redis", srv.Addr}, append(flags, evalScript)...), words...)...)
		if viaServer.stdout != want.stdout || viaServer.code != want.code {
			t.Errorf("%s %q: luagen eval --redis differs from redis-cli:\nredis-cli:\n%s\n--redis:\n%s%s",
				tc.File, tc.Name, want.stdout, viaServer.stdout, viaServer.stderr)
		}
		compared++
	}
	t.Logf("%d corpus cases compared byte for byte", compared)
	assert.Greater(t, compared, 400)
}

// initFails reports whether a case seeds with a command meant to fail.
func initFails(tc corpus.Case) bool {
	r := luatest.New()
	defer r.Close()
	for _, c := range tc.Init {
		if r.Command(2, c...).Kind == resp.Error {
			return true
		}
	}
	return false
}

func TestUsageAndFileErrors(t *testing.T) {
	r := run()
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "usage: luagen eval")
	r = run("--bogus", "x.lua")
	assert.Equal(t, 2, r.code)
	r = run("--timeout", "0s", "x.lua")
	assert.Equal(t, 2, r.code)

	r = run("/nonexistent/x.lua")
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "Can't open file '/nonexistent/x.lua': No such file or directory\n", r.stderr, "redis-cli's wording")

	dir := t.TempDir()
	script := filepath.Join(dir, "s.lua")
	require.NoError(t, os.WriteFile(script, []byte("return redis.call('GET', KEYS[1])"), 0o644))
	initFile := filepath.Join(dir, "init.txt")
	require.NoError(t, os.WriteFile(initFile, []byte("# seed\nSET k \"a b\"\n\nBOGUS x\n"), 0o644))
	r = run("--init", initFile, script, "k")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "command 2 (BOGUS): (error) ERR unknown command 'BOGUS'")

	require.NoError(t, os.WriteFile(initFile, []byte("SET k \"unterminated\n"), 0o644))
	r = run("--init", initFile, script, "k")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "init.txt:1: unbalanced quotes")

	require.NoError(t, os.WriteFile(initFile, []byte("SET k \"a b\"\n"), 0o644))
	r = run("--init", initFile, script, "k")
	assert.Equal(t, result{stdout: "\"a b\"\n", code: 0}, r)

	r = run("--redis", "127.0.0.1:1", script)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "Could not connect to Redis at 127.0.0.1:1")
}

func TestRepliesRedisCliCannotPrint(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.lua")
	require.NoError(t, os.WriteFile(big, []byte("return {big_number='12345678901234567890'}"), 0o644))
	assert.Equal(t, result{stderr: "Unknown reply type: 13\n", code: 1}, run("--resp3", big))
	assert.Equal(t, result{stdout: "\"12345678901234567890\"\n"}, run(big), "RESP2 sends a bulk string")

	nan := filepath.Join(dir, "nan.lua")
	require.NoError(t, os.WriteFile(nan, []byte("return {double=0/0}"), 0o644))
	assert.Equal(t, result{stderr: "Error: Bad double value\n", code: 1}, run("--resp3", nan))
}

func TestKeysCheckFlagAndTimeout(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "s.lua")
	require.NoError(t, os.WriteFile(script, []byte("return redis.call('GET', 'undeclared')"), 0o644))
	assert.Equal(t, result{stdout: "(nil)\n"}, run(script))
	r := run("--check-keys", script)
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "(error) ERR luatest: script accessed key 'undeclared' not declared in KEYS (user_script:1)")

	loop := filepath.Join(dir, "loop.lua")
	require.NoError(t, os.WriteFile(loop, []byte("while true do end"), 0o644))
	r = run("--timeout", "50ms", loop)
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "ran longer than 50ms")
}

// TestArityFromHeader: with a header, the words must match its keys and
// args before anything runs; a forgotten "," is the usual slip.
func TestArityFromHeader(t *testing.T) {
	dir := t.TempDir()
	allow := filepath.Join(dir, "allow.lua")
	require.NoError(t, os.WriteFile(allow, []byte(`--- Allow admits id unless limit calls were admitted in the last span ms.
---@key window the sorted set of admitted calls
---@arg now   int64 current time, Unix ms
---@arg span  int64 window length, ms
---@arg limit int64 calls allowed per window
---@arg id    string this call's id
---@return int64 1 admitted, 0 refused
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1] - ARGV[2])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
return 1
`), 0o644))
	assert.Equal(t, result{stdout: "(integer) 1\n"}, run(allow, "w", ",", "1700000000000", "10000", "3", "r1"))
	assert.Equal(t, result{
		stderr: "luagen eval: " + allow + ` declares 1 key (window) and 4 args (now, span, limit, id); got 5 keys and 0 args — separate keys from args with ","` + "\n",
		code:   2,
	}, run(allow, "w", "1700000000000", "10000", "3", "r1"))
	r := run(allow, "w", ",", "1700000000000", "10000", "3")
	assert.Equal(t, 2, r.code)
	assert.Equal(t, "luagen eval: "+allow+" declares 1 key (window) and 4 args (now, span, limit, id); got 1 key and 3 args\n", r.stderr, "with the comma, no hint about it")
	assert.Empty(t, r.stdout, "nothing ran")
	r = run("--any-arity", allow, "w", "1700000000000", "10000", "3", "r1")
	assert.Equal(t, 0, r.code, "--any-arity runs it anyway, as redis-cli would")
	assert.Contains(t, r.stdout, "(error) ERR user_script:")

	// Variadic: any number beyond the fixed ones.
	touch := filepath.Join(dir, "touch.lua")
	require.NoError(t, os.WriteFile(touch, []byte("---@key first k\n---@key ...rest ks\n---@arg ...ms int64 m\nlocal n = 0\nfor i = 1, #KEYS do n = n + redis.call('EXISTS', KEYS[i]) end\nreturn n + #ARGV\n"), 0o644))
	assert.Equal(t, result{stdout: "(integer) 0\n"}, run(touch, "a"))
	assert.Equal(t, result{stdout: "(integer) 2\n"}, run(touch, "a", "b", "c", ",", "1", "2"))
	r = run(touch, ",", "1")
	assert.Equal(t, 2, r.code)
	assert.Equal(t, "luagen eval: "+touch+" declares at least 1 key (first, ...rest) and any number of args (...ms); got 0 keys and 1 arg\n", r.stderr)

	// A header without keys or args declares none.
	none := filepath.Join(dir, "none.lua")
	require.NoError(t, os.WriteFile(none, []byte("---@return int64 one\nreturn 1\n"), 0o644))
	r = run(none, "k")
	assert.Equal(t, 2, r.code)
	assert.Equal(t, "luagen eval: "+none+" declares no keys and no args; got 1 key and 0 args\n", r.stderr)

	// No header, or one whose key lines do not parse: nothing to check.
	plain := filepath.Join(dir, "plain.lua")
	require.NoError(t, os.WriteFile(plain, []byte("return #KEYS + #ARGV\n"), 0o644))
	assert.Equal(t, result{stdout: "(integer) 3\n"}, run(plain, "a", "b", "c"))
	broken := filepath.Join(dir, "broken.lua")
	require.NoError(t, os.WriteFile(broken, []byte("---@kye a k\nreturn #KEYS\n"), 0o644))
	assert.Equal(t, result{stdout: "(integer) 2\n"}, run(broken, "a", "b"))
}

// A script with ---@include lines runs with its files inlined, offline and
// on a real server alike; an error reply's line is followed on stderr by
// the file and line it comes from, and an include that cannot be read
// stops the run.
func TestIncludedScript(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "set.lua")
	helper := filepath.Join(dir, "lib", "put.lua")
	require.NoError(t, os.MkdirAll(filepath.Dir(helper), 0o755))
	require.NoError(t, os.WriteFile(script, []byte("---@key k the key\n---@arg ms int64 lease\n---@include lib/put.lua\nreturn put(ARGV[1])\n"), 0o644))
	require.NoError(t, os.WriteFile(helper, []byte("-- put sets k for ms\nlocal function put(ms)\n  return redis.call('SET', KEYS[1], 'v', 'PX', ms)\nend\n"), 0o644))
	srv := redistest.Start(t)
	for _, extra := range [][]string{nil, {"--redis", srv.Addr}} {
		ok := run(append(extra, script, "k", ",", "1000")...)
		assert.Equal(t, result{"OK\n", "", 0}, ok)
		bad := run(append(extra, script, "k", ",", "0")...)
		assert.Equal(t, 0, bad.code)
		assert.Contains(t, bad.stdout, "(error) ERR invalid expire time in 'set' command script: ")
		assert.Contains(t, bad.stdout, "on @user_script:6.")
		assert.Equal(t, "luagen eval: user_script:6 is "+helper+":3 (the script runs with its ---@include files inlined)\n", bad.stderr)
	}
	require.NoError(t, os.Remove(helper))
	missing := run(script, "k", ",", "1000")
	assert.Equal(t, 1, missing.code)
	assert.Empty(t, missing.stdout)
	assert.Equal(t, script+":3:13: cannot include lib/put.lua: open "+helper+": no such file or directory\n", missing.stderr)
}
