// Package evalcmd is `luagen eval`: run a Lua script from the command line
// without a server, the way `redis-cli --eval` runs it against one.
//
//	luagen eval [--init FILE] [--resp3] [--redis ADDR] [--check-keys] [--timeout D] [--any-arity] script.lua [key ...] [, arg ...]
//
// Words before the first lone "," are KEYS, the rest ARGV, as redis-cli
// splits them. The script runs in luatest's Redis 7.0 sandbox on an empty
// keyspace, first seeded with the commands of --init FILE (one per line,
// quoted like redis-cli input; blank lines and lines starting with '#' are
// skipped). The reply is printed exactly as `redis-cli --no-raw --eval`
// prints it, so the two outputs can be compared byte for byte; --resp3 runs
// the script as a RESP3 client (`redis-cli -3`) would.
//
// --redis ADDR runs the same (seeding included) against a real server at
// host:port instead. It talks RESP over a plain connection, not through
// rueidis: rueidis strips "ERR " from error replies and hides whether a
// string was a status or a bulk reply, and redis-cli's output shows both.
//
// A script whose header has ---@include lines runs with the files they name
// inlined, exactly the text generated code sends (gen.Expand); an include
// that cannot be read is reported and nothing runs. Its lines are then
// those of the combined text, as in the server's "@user_script:N", so an
// error reply naming one is followed on stderr by the file and line it
// comes from:
//
//	luagen eval: user_script:63 is lua/lock/lib/draw.lua:13 (the script runs with its ---@include files inlined)
//
// When the script has a luagen header (any ---@ line), the number of keys
// and args is checked against its ---@key and ---@arg lines before anything
// runs (a variadic ...name takes any number beyond the fixed ones); a
// mismatch, such as a forgotten ",", is a usage error naming what the
// header declares (--any-arity runs the script anyway, to see how it fails):
//
//	allow.lua declares 1 key (window) and 4 args (now, span, limit, id); got 5 keys and 0 args — separate keys from args with ","
//
// Exit status: 0 when a reply was printed, even an error reply (redis-cli
// --eval does the same); 1 when the script file or init file cannot be
// read, a seeding command fails, the server cannot be reached, or the reply
// is one redis-cli 7.0 cannot print (a RESP3 big number or NaN double,
// reported on stderr as redis-cli reports it); 2 for usage errors, the
// mismatch above included.
package evalcmd

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/luagen/luagen/gen"
	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/luatest/resp"
)

const usage = `usage: luagen eval [--init FILE] [--resp3] [--redis ADDR] [--check-keys] [--timeout D] [--any-arity] script.lua [key ...] [, arg ...]
`

// Run runs `luagen eval` with args (the words after "eval"), writing the
// reply to stdout and problems to stderr, and returns the exit status.
func Run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("luagen eval", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	initFile := fs.String("init", "", "file of Redis commands, one per line, run before the script")
	resp3 := fs.Bool("resp3", false, "run as a RESP3 client, like redis-cli -3")
	addr := fs.String("redis", "", "run against the real server at host:port instead of offline")
	checkKeys := fs.Bool("check-keys", false, "fail commands on keys the script was not given in KEYS, nor built from one up to its hash tag (offline only)")
	timeout := fs.Duration("timeout", 10*time.Second, "stop a script (offline) or a request (--redis) after this long")
	anyArity := fs.Bool("any-arity", false, "run even when the number of keys or args differs from the script's header")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, usage+"\nFlags:\n")
			fs.SetOutput(stderr)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(stderr, "luagen eval: %v\n%s", err, usage)
		return 2
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fmt.Fprint(stderr, "luagen eval: no script file given\n"+usage)
		return 2
	}
	if *timeout <= 0 {
		fmt.Fprint(stderr, "luagen eval: --timeout must be positive\n"+usage)
		return 2
	}
	body, err := os.ReadFile(rest[0])
	if err != nil {
		fmt.Fprintf(stderr, "Can't open file '%s': %s\n", rest[0], errText(err))
		return 1
	}
	text, spans, diags := gen.Expand(gen.Source{Path: rest[0], File: rest[0], Src: body, ReadInclude: os.ReadFile})
	if len(diags) > 0 {
		fmt.Fprintln(stderr, diags.Error())
		return 1
	}
	var seed [][]string
	if *initFile != "" {
		if seed, err = readInit(*initFile); err != nil {
			fmt.Fprintf(stderr, "luagen eval: %v\n", err)
			return 1
		}
	}
	keys, argv := splitKeys(rest[1:])
	if msg := checkArity(rest[0], body, keys, argv, len(keys) < len(rest)-1); msg != "" && !*anyArity {
		fmt.Fprintf(stderr, "luagen eval: %s\n", msg)
		return 2
	}
	proto := 2
	if *resp3 {
		proto = 3
	}
	cmd := append([]string{"EVAL", text, fmt.Sprint(len(keys))}, keys...)
	cmd = append(cmd, argv...)

	var do func(args ...string) (resp.Reply, error)
	if *addr != "" {
		conn, err := resp.Dial(*addr, proto, *timeout)
		if err != nil {
			fmt.Fprintf(stderr, "Could not connect to Redis at %s: %v\n", *addr, err)
			return 1
		}
		defer conn.Close()
		do = func(args ...string) (resp.Reply, error) {
			_ = conn.SetDeadline(time.Now().Add(*timeout))
			return conn.Do(args...)
		}
	} else {
		mode := luatest.KeysUnchecked
		if *checkKeys {
			mode = luatest.KeysDeclared
		}
		r := luatest.New(luatest.WithKeysCheck(mode), luatest.WithScriptTimeout(*timeout))
		defer r.Close()
		do = func(args ...string) (resp.Reply, error) { return r.Command(proto, args...), nil }
	}
	for i, c := range seed {
		rep, err := do(c...)
		if err != nil {
			fmt.Fprintf(stderr, "luagen eval: %s: %v\n", *initFile, err)
			return 1
		}
		if rep.Kind == resp.Error {
			fmt.Fprintf(stderr, "luagen eval: %s: command %d (%s): (error) %s\n", *initFile, i+1, c[0], rep.Str)
			return 1
		}
	}
	reply, err := do(cmd...)
	if err != nil {
		fmt.Fprintf(stderr, "luagen eval: %v\n", err)
		return 1
	}
	if proto == 3 && hasNaNDouble(reply) {
		// hiredis refuses ",nan" and redis-cli reports it so.
		fmt.Fprint(stderr, "Error: Bad double value\n")
		return 1
	}
	out, err := resp.Format(reply)
	var unprintable *resp.UnprintableError
	if errors.As(err, &unprintable) {
		fmt.Fprintln(stderr, unprintable.Msg)
		return 1
	}
	io.WriteString(stdout, out)
	if where := includedLine(reply, spans); where != "" {
		fmt.Fprintf(stderr, "luagen eval: %s (the script runs with its ---@include files inlined)\n", where)
	}
	return 0
}

var reUserScript = regexp.MustCompile(`user_script:([0-9]+)`)

// includedLine returns "user_script:N is file.lua:M" for an error reply
// that names line N of a script with included files, or "".
func includedLine(reply resp.Reply, spans []gen.Span) string {
	if reply.Kind != resp.Error || spans == nil {
		return ""
	}
	ms := reUserScript.FindAllStringSubmatch(reply.Str, -1)
	if ms == nil {
		return ""
	}
	n, err := strconv.Atoi(ms[len(ms)-1][1])
	if err != nil || n < 1 {
		return ""
	}
	// The first span starts at line 1, so every line has one.
	path, line := (&gen.Script{Spans: spans}).Position(n)
	return fmt.Sprintf("user_script:%d is %s:%d", n, path, line)
}

// checkArity compares the words with the keys and args the script's header
// declares and returns what is wrong, or "" when they fit or the script has
// no usable header (a plain script, or one whose ---@key/---@arg lines do
// not parse: then Redis' own error is all there is to show). comma says
// whether the words held the "," between keys and args.
func checkArity(path string, body []byte, keys, args []string, comma bool) string {
	s, _ := gen.Parse(path, path, body)
	dk, da, ok := s.Declared()
	if !ok || fits(dk, len(keys)) && fits(da, len(args)) {
		return ""
	}
	msg := fmt.Sprintf("%s declares %s and %s; got %d %s and %d %s", path,
		declared(dk, "key"), declared(da, "arg"), len(keys), plural(len(keys), "key"), len(args), plural(len(args), "arg"))
	if !comma && len(da) > 0 {
		msg += ` — separate keys from args with ","`
	}
	return msg
}

// fits reports whether n words fill the declared params: exactly one each,
// or at least the fixed ones when the last is variadic (...name).
func fits(ps []*gen.Param, n int) bool {
	if len(ps) > 0 && ps[len(ps)-1].Variadic {
		return n >= len(ps)-1
	}
	return n == len(ps)
}

// declared spells a declared list: "no keys", "1 key (window)", "4 args
// (now, span, limit, id)", "at least 1 key (a, ...rest)", "any number of
// args (...ids)".
func declared(ps []*gen.Param, kind string) string {
	if len(ps) == 0 {
		return "no " + kind + "s"
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
		if p.Variadic {
			names[i] = "..." + p.Name
		}
	}
	list := " (" + strings.Join(names, ", ") + ")"
	if ps[len(ps)-1].Variadic {
		n := len(ps) - 1
		if n == 0 {
			return "any number of " + kind + "s" + list
		}
		return fmt.Sprintf("at least %d %s%s", n, plural(n, kind), list)
	}
	return fmt.Sprintf("%d %s%s", len(ps), plural(len(ps), kind), list)
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// splitKeys splits redis-cli --eval's words at the first lone ",".
func splitKeys(words []string) (keys, args []string) {
	for i, w := range words {
		if w == "," {
			return words[:i], words[i+1:]
		}
	}
	return words, nil
}

// readInit reads an init file: one command per line, redis-cli quoting.
func readInit(path string) ([][]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cmds [][]string
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimRight(line, "\r")
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		words, err := luatest.SplitArgs(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, i+1, err)
		}
		cmds = append(cmds, words)
	}
	return cmds, nil
}

func hasNaNDouble(r resp.Reply) bool {
	if r.Kind == resp.Double && (r.Str == "nan" || r.Str == "-nan") {
		return true
	}
	for _, e := range r.Elems {
		if hasNaNDouble(e) {
			return true
		}
	}
	return false
}

// errText is strerror's wording of a file error, as redis-cli prints it.
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	s := err.Error()
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
