package gen

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// aliasScript is written as BullMQ writes its scripts: every call through
// local rcall = redis.call, helpers included in the body after it, keys
// built in Lua and read from data.
const aliasScript = `---@key wait the wait list
---@key meta the meta hash
---@arg prefix string the queue's key prefix
---@arg id string the job id
---@return int64 the job's position
local rcall = redis.call
local rpcall = redis.pcall
--- @include "includes/remove"
local jobKey = ARGV[1] .. ARGV[2]
if rcall("EXISTS", jobKey) == 1 then
  remove(jobKey)
end
local parent = rcall("HGET", KEYS[2], "parent")
if parent then
  rpcall("DEL", parent)
end
rcall("SET", "stats", 1)
rcall("FLUSHALL")
local t = rcall("TIME")
return rcall("LRANGE", KEYS[1], 0, -1)
`

const aliasHelper = `local function remove(k)
  rcall("DEL", k .. ":logs")
  return rcall("LREM", "other", 0, k)
end
`

// luagen check on a script that calls Redis through an alias reports the
// same problems, at the same lines, as with redis.call written out: the
// cluster-key lint (a key built in Lua, a key read from a reply, a
// literal key), the command checks (FLUSHALL under no-writes), the reply
// analysis (an array under int64) and undeclared reads, in the script and
// in the helper it includes.
func TestAliasReportsWhatWrittenOutReports(t *testing.T) {
	parse := func(script, helper string) Diagnostics {
		src := Source{Path: "s.lua", File: "lua/s.lua", Src: []byte("#!lua flags=no-writes\n" + script),
			ReadInclude: mapRead(map[string]string{"includes/remove.lua": helper})}
		_, diags := ParseSource(src)
		return diags
	}
	aliased := parse(aliasScript, aliasHelper)
	written := strings.NewReplacer("rcall(", "redis.call(", "rpcall(", "redis.pcall(").Replace(aliasScript)
	written = regexp.MustCompile(`(?m)^local r(p?)call = .*$`).ReplaceAllString(written, "")
	writtenOut := parse(written, strings.ReplaceAll(aliasHelper, "rcall(", "redis.call("))
	strip := func(ds Diagnostics) []string {
		var out []string
		for _, d := range ds {
			out = append(out, fmt.Sprintf("%s:%d: %s", d.Path, d.Pos.Line, d.Msg)) // columns differ with the names' lengths
		}
		return out
	}
	require.NotEmpty(t, writtenOut)
	assert.Equal(t, strip(writtenOut), strip(aliased))
	for _, want := range []string{
		"s.lua:11: cluster-unsafe key: the EXISTS key is built in Lua (string concatenation)",
		"includes/remove.lua:2: cluster-unsafe key: the DEL key is built in Lua (string concatenation)",
		"s.lua:16: cluster-unsafe key: the DEL key comes from a redis.call reply",
		"s.lua:18: cluster-unsafe key: the SET key is the literal \"stats\"",
		"s.lua:19: FLUSHALL writes, but the shebang declares flags=no-writes",
		"s.lua:21: a LRANGE reply is sent as an array",
	} {
		assert.True(t, slicesContainPrefix(strip(aliased), want), "want %q in\n%s", want, strings.Join(strip(aliased), "\n"))
	}
}

func slicesContainPrefix(ss []string, prefix string) bool {
	for _, s := range ss {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}
