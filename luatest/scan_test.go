package luatest_test

import (
	"math/rand"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/luatest/resp"
)

// TestScanWhileWriting checks SCAN's guarantee on luatest's own cursors
// with writes the corpus cannot compare with the server (their outcome
// depends on the order): between the calls of a full iteration, random
// elements are deleted, re-added and added. Every element present from
// the start to the end must come back, none twice, and every cursor must
// stay an integer a Lua number holds exactly.
func TestScanWhileWriting(t *testing.T) {
	type kind struct {
		scan, add, del string
		step           int
	}
	for _, k := range []kind{
		{"SCAN", "SET", "DEL", 1},
		{"SSCAN", "SADD", "SREM", 1},
		{"HSCAN", "HSET", "HDEL", 2},
		{"ZSCAN", "ZADD", "ZREM", 2},
	} {
		for _, count := range []int{1, 7, 50} {
			t.Run(k.scan+"/"+strconv.Itoa(count), func(t *testing.T) {
				r := luatest.New(luatest.WithKeysCheck(luatest.KeysUnchecked))
				defer r.Close()
				rnd := rand.New(rand.NewSource(int64(count)))
				write := func(cmd, name string) {
					var args []string
					switch {
					case k.scan == "SCAN" && cmd == "SET":
						args = []string{cmd, name, "v"}
					case k.scan == "SCAN":
						args = []string{cmd, name}
					case cmd == "HSET" || cmd == "ZADD":
						args = []string{cmd, "c", "1", name}
						if cmd == "HSET" {
							args[2], args[3] = name, "v"
						}
					default:
						args = []string{cmd, "c", name}
					}
					rep := r.Command(2, args...)
					require.NotEqual(t, resp.Error, rep.Kind, "%q: %s", args, rep)
				}
				const n = 700 // past every compact encoding's limit
				for i := 0; i < n; i++ {
					write(k.add, "e"+strconv.Itoa(i))
				}
				kept := map[string]bool{} // present from start to end
				for i := 0; i < n; i++ {
					kept["e"+strconv.Itoa(i)] = true
				}
				seen := map[string]bool{}
				cursor, added := "0", 0
				for calls := 0; ; calls++ {
					require.Less(t, calls, 10*n, "the iteration does not end")
					args := []string{k.scan, cursor, "COUNT", strconv.Itoa(count)}
					if k.scan != "SCAN" {
						args = []string{k.scan, "c", cursor, "COUNT", strconv.Itoa(count)}
					}
					rep := r.Command(2, args...)
					require.Equal(t, resp.Array, rep.Kind, "%s", rep)
					cursor = rep.Elems[0].Str
					c, err := strconv.ParseUint(cursor, 10, 64)
					require.NoError(t, err)
					require.LessOrEqual(t, c, uint64(1)<<53)
					for i := 0; i < len(rep.Elems[1].Elems); i += k.step {
						name := rep.Elems[1].Elems[i].Str
						require.False(t, seen[name], "%s returned twice", name)
						seen[name] = true
					}
					if cursor == "0" {
						break
					}
					for j := 0; j < 3; j++ {
						victim := "e" + strconv.Itoa(rnd.Intn(n))
						switch rnd.Intn(3) {
						case 0:
							write(k.del, victim)
							delete(kept, victim)
						case 1:
							write(k.del, victim)
							write(k.add, victim)
							delete(kept, victim)
						default:
							write(k.add, "new"+strconv.Itoa(added))
							added++
						}
					}
				}
				for name := range kept {
					require.True(t, seen[name], "%s was present throughout but never returned", name)
				}
			})
		}
	}
}
