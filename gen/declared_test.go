package gen

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDeclared(t *testing.T) {
	names := func(ps []*Param) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	for _, tc := range []struct {
		name, src  string
		keys, args []string
		ok         bool
	}{
		{"header", "---@key a x\n---@key ...rest y\n---@arg n int64 z\nreturn {KEYS[1], KEYS[2], ARGV[1]}", []string{"a", "rest"}, []string{"n"}, true},
		{"tags but no keys or args", "---@return int64 one\nreturn 1", nil, nil, true},
		{"no header", "return redis.call('GET', KEYS[1])", nil, nil, false},
		{"doc lines only", "--- Get gets.\nreturn 1", nil, nil, false},
		{"bad key line", "---@key a x\n---@key 9b y\nreturn {KEYS[1], KEYS[2]}", []string{"a"}, nil, false},
		{"misspelled arg tag", "---@key a x\n---@agr n int64 z\nreturn {KEYS[1], ARGV[1]}", []string{"a"}, nil, false},
		{"unrelated unknown tag", "---@key a x\n---@eror -1 Gone g\nreturn KEYS[1]", []string{"a"}, nil, true},
	} {
		s, _ := Parse("t.lua", "t.lua", []byte(tc.src))
		keys, args, ok := s.Declared()
		assert.Equal(t, tc.keys, names(keys), tc.name)
		assert.Equal(t, tc.args, names(args), tc.name)
		assert.Equal(t, tc.ok, ok, tc.name)
	}
}
