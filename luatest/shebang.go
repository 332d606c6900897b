package luatest

import (
	"strings"
)

// scriptFlags are the flags a Redis 7 shebang can declare
// (https://redis.io/docs/latest/develop/interact/programmability/eval-intro/#eval-flags).
type scriptFlags uint8

const (
	flagNoWrites scriptFlags = 1 << iota
	flagAllowOOM
	flagAllowStale
	flagNoCluster
	flagAllowCrossSlot
	flagEvalCompat // no shebang: the pre-7.0 behaviour
)

var flagNames = map[string]scriptFlags{
	"no-writes":             flagNoWrites,
	"allow-oom":             flagAllowOOM,
	"allow-stale":           flagAllowStale,
	"no-cluster":            flagNoCluster,
	"allow-cross-slot-keys": flagAllowCrossSlot,
}

// parseShebang is evalExtractShebangFlags (eval.c): a body starting with
// "#!" must have a first line "#!lua [flags=a,b]"; it returns the flags
// and the length of that line, which the caller blanks so line numbers
// stay. errMsg is the server's error text (without "ERR ").
func parseShebang(body string) (flags scriptFlags, lineLen int, errMsg string) {
	if !strings.HasPrefix(body, "#!") {
		return flagEvalCompat, 0, ""
	}
	end := strings.IndexByte(body, '\n')
	if end < 0 {
		return 0, 0, "Invalid script shebang"
	}
	parts, err := SplitArgs(body[:end])
	if err != nil || len(parts) == 0 {
		return 0, 0, "Invalid engine in script shebang"
	}
	if parts[0] != "#!lua" {
		return 0, 0, "Unexpected engine in script shebang: " + parts[0]
	}
	for _, p := range parts[1:] {
		list, ok := strings.CutPrefix(p, "flags=")
		if !ok {
			return 0, 0, "Unknown lua shebang option: " + p
		}
		if list == "" {
			continue
		}
		for _, f := range strings.Split(list, ",") {
			bit, ok := flagNames[f]
			if !ok {
				return 0, 0, "Unexpected flag in script shebang: " + f
			}
			flags |= bit
		}
	}
	return flags, end, ""
}
