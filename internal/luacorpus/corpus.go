// Package corpus loads the differential test corpus of luatest:
// scripts with their KEYS, ARGV and keyspace seed, run both on luatest and
// on a real redis-server (and through luagen eval and redis-cli --eval) to
// prove the fake behaves like the server.
//
// A corpus file holds cases, each starting with a "=== name" line:
//
//	=== deduct refuses when stock is short
//	init: SET s 1                 (any number; one command, redis-cli quoting)
//	keys: s log                   (optional; redis-cli quoting)
//	args: 2 u7                    (optional)
//	resp3                         (optional: the client speaks RESP3, like redis-cli -3)
//	deviation: luaerror           (optional: a documented deviation, see Deviation)
//	file: ../../../lua/stock/deduct.lua   (optional: the script, relative to the corpus file,
//	                                       with its ---@include files inlined as luagen sends it)
//	---
//	return redis.call('GET', KEYS[1])   (the script, unless file: is given)
//
// A case with the header line "library" is a Redis Functions case: its
// body is loaded with FUNCTION LOAD instead of run with EVAL (keys: and
// args: do not apply), then each "call:" line runs in order and every reply
// is compared:
//
//	=== fcall passes keys and args
//	library
//	call: FCALL f 1 k a
//	call: FUNCTION LIST WITHCODE
//	---
//	#!lua name=lib
//	redis.register_function('f', function(keys, args) return {keys[1], args[1]} end)
package luacorpus

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/luagen/luagen/gen"
)

// Deviation names a documented way luatest's reply may differ from the
// server's for a case; the differential test compares such replies with the
// rule the deviation describes instead of byte for byte.
type Deviation string

const (
	// None: replies and keyspace must be identical.
	None Deviation = ""
	// LuaError: a Lua runtime error whose message text gopher-lua words
	// differently from Lua 5.1 ("attempt to index a nil value" vs "attempt
	// to index local 't' (a nil value)"); the error class, "user_script:N:"
	// position and the "script: <sha>, on @user_script:N." suffix must match.
	LuaError Deviation = "luaerror"
)

// Case is one corpus entry.
type Case struct {
	Name      string
	File      string // corpus file and line, for failure messages
	Init      [][]string
	InitLines []string // the init lines as written, for redis-cli
	Keys      []string
	Args      []string
	RESP3     bool
	Deviation Deviation
	Script    string
	// ScriptFile is the file: line's script, whose text with its
	// ---@include files inlined (gen.Expand, what generated code sends)
	// is Script; "" for a script written in the case.
	ScriptFile string
	// Library: Script is a function library for FUNCTION LOAD, and Calls
	// the commands run after loading it.
	Library bool
	Calls   [][]string
}

// Load reads every *.txt file in dir, in name order.
func Load(dir string, split func(string) ([]string, error)) ([]Case, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var all []Case
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		cs, err := Parse(f, string(b), split)
		if err != nil {
			return nil, err
		}
		all = append(all, cs...)
	}
	return all, nil
}

// Parse parses one corpus file; split splits a command line into words.
func Parse(path, text string, split func(string) ([]string, error)) ([]Case, error) {
	var out []Case
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "=== ") {
			if strings.TrimSpace(lines[i]) != "" && len(out) == 0 {
				return nil, fmt.Errorf("%s:%d: text before the first === case", path, i+1)
			}
			continue
		}
		c := Case{Name: strings.TrimSpace(lines[i][4:]), File: fmt.Sprintf("%s:%d", path, i+1)}
		i++
		for ; i < len(lines) && lines[i] != "---"; i++ {
			l := strings.TrimSpace(lines[i])
			var err error
			switch {
			case l == "":
			case strings.HasPrefix(l, "init:"):
				line := strings.TrimSpace(l[5:])
				var words []string
				if words, err = split(line); err == nil {
					c.Init = append(c.Init, words)
					c.InitLines = append(c.InitLines, line)
				}
			case strings.HasPrefix(l, "keys:"):
				c.Keys, err = split(l[5:])
			case strings.HasPrefix(l, "args:"):
				c.Args, err = split(l[5:])
			case l == "resp3":
				c.RESP3 = true
			case l == "library":
				c.Library = true
			case strings.HasPrefix(l, "call:"):
				var words []string
				if words, err = split(strings.TrimSpace(l[5:])); err == nil {
					c.Calls = append(c.Calls, words)
				}
			case strings.HasPrefix(l, "deviation:"):
				c.Deviation = Deviation(strings.TrimSpace(l[10:]))
				if c.Deviation != LuaError {
					err = fmt.Errorf("unknown deviation %q", c.Deviation)
				}
			case strings.HasPrefix(l, "file:"):
				c.ScriptFile = filepath.Join(filepath.Dir(path), strings.TrimSpace(l[5:]))
				var b []byte
				if b, err = os.ReadFile(c.ScriptFile); err == nil {
					var diags gen.Diagnostics
					c.Script, _, diags = gen.Expand(gen.Source{Path: c.ScriptFile, File: c.ScriptFile, Src: b, ReadInclude: os.ReadFile})
					if len(diags) > 0 {
						err = diags
					}
				}
			default:
				err = fmt.Errorf("unknown header line %q", l)
			}
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", path, i+1, err)
			}
		}
		if i >= len(lines) {
			return nil, fmt.Errorf("%s: case %q has no --- line", path, c.Name)
		}
		if len(c.Calls) > 0 && !c.Library {
			return nil, fmt.Errorf("%s: case %q has call: lines but is not a library case", path, c.Name)
		}
		i++
		var body []string
		for ; i < len(lines) && !strings.HasPrefix(lines[i], "=== "); i++ {
			body = append(body, lines[i])
		}
		i--
		if c.Script == "" {
			c.Script = strings.TrimRight(strings.Join(body, "\n"), "\n") + "\n"
		}
		out = append(out, c)
	}
	return out, nil
}
