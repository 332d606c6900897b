package commands

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLookupArgs(t *testing.T) {
	c, ok := LookupArgs([]string{"OBJECT", "Encoding", "k"})
	require.True(t, ok)
	require.Equal(t, "object|encoding", c.Name)
	require.Equal(t, 3, c.Arity)
	_, ok = LookupArgs([]string{"client", "nosuch"})
	require.False(t, ok)
	c, ok = LookupArgs([]string{"client"})
	require.True(t, ok)
	require.False(t, c.ArityOK(1))
	c, _ = Lookup("blpop")
	require.True(t, c.Has(Write|NoScript|Blocking))
}

func TestKeys(t *testing.T) {
	cases := []struct {
		argv []string
		want []string
	}{
		{[]string{"get", "a"}, []string{"a"}},
		{[]string{"mset", "a", "1", "b", "2"}, []string{"a", "b"}},
		{[]string{"del", "a", "b"}, []string{"a", "b"}},
		{[]string{"zunionstore", "d", "2", "a", "b", "WEIGHTS", "1", "2"}, []string{"a", "b", "d"}},
		{[]string{"xread", "COUNT", "1", "STREAMS", "s1", "s2", "0", "0"}, []string{"s1", "s2"}},
		{[]string{"eval", "return 1", "1", "k", "arg"}, []string{"k"}},
		{[]string{"publish", "ch", "m"}, nil},
		{[]string{"spublish", "ch", "m"}, nil},
		{[]string{"sort", "l", "BY", "w_*", "STORE", "dst"}, []string{"l"}}, // STORE is an unknown spec: the server uses sortGetKeys,
		{[]string{"lmpop", "2", "a", "b", "LEFT"}, []string{"a", "b"}},
		{[]string{"copy", "a", "b", "DB", "1"}, []string{"a", "b"}},
	}
	for _, tc := range cases {
		c, ok := LookupArgs(tc.argv)
		require.True(t, ok, tc.argv)
		got := c.Keys(tc.argv)
		slices.Sort(got)
		require.Equal(t, tc.want, got, tc.argv)
	}
}
