package gen

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNamesChecked proves that every name namesOf derives is one the
// collision check adds (Method, fromName, Tuple, Errors): a field added to
// scriptNames and emitted, but left out of the check, fails here.
func TestNamesChecked(t *testing.T) {
	for _, src := range []string{
		"---@script Deduct\n---@key stock s\n---@arg qty int64 q\n---@return int64 left\n---@status 0 SoldOut none left\n---@error -1 OutOfStock o\n---@error -2 NoSuchSKU n\n" +
			"if ARGV[1] == 'x' then return -1 end\nif ARGV[1] == 'y' then return -2 end\nreturn redis.call('DECRBY', KEYS[1], ARGV[1])",
		"---@script Info\n---@return tuple SKUInfo i\n---@field left int64 l\nreturn {1}",
	} {
		s, diags := Parse("t.lua", "t.lua", []byte(src))
		require.Empty(t, diags)
		n := namesOf(s)
		checked := map[string]bool{n.Method: true, n.Tuple: true}
		for _, d := range n.fromName(s) {
			checked[d.name] = true
		}
		for _, e := range n.Errors {
			checked[e] = true
		}
		v := reflect.ValueOf(n)
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			var names []string
			switch f.Kind() {
			case reflect.String:
				names = []string{f.String()}
			case reflect.Slice:
				names = f.Interface().([]string)
			default:
				t.Fatalf("scriptNames.%s is a %s: teach this test (and checkPackage) about it", v.Type().Field(i).Name, f.Kind())
			}
			for _, name := range names {
				assert.True(t, name == "" || checked[name], "scriptNames.%s = %q is not collision-checked", v.Type().Field(i).Name, name)
			}
		}
	}
}

// TestNamesOf pins the names of a script with every part, and of one with
// none: the names the golden files were generated with.
func TestNamesOf(t *testing.T) {
	s, diags := Parse("t.lua", "t.lua", []byte("---@script URLFetch\n---@key page p\n---@arg n int64 n\n---@return int64 r\n---@status 1 Done d\n---@error -1 Gone g\n"+
		"if ARGV[1] == '1' then return -1 end\nreturn redis.call('STRLEN', KEYS[1])"))
	require.Empty(t, diags)
	assert.Equal(t, scriptNames{
		Method: "URLFetch", Queue: "QueueURLFetch", Script: "URLFetchScript", Var: "urlFetchScript",
		Body: "urlFetchBody", Decode: "urlFetchDecode", Call: "urlFetchCall", Calls: "urlFetchCalls",
		Keys: "URLFetchKeys", Args: "URLFetchArgs", Reply: "URLFetchReply",
		Statuses: []string{"URLFetchDone"}, Errors: []string{"ErrGone"},
	}, namesOf(s))

	s, diags = Parse("ping.lua", "ping.lua", []byte("return 1"))
	require.Empty(t, diags)
	assert.Equal(t, scriptNames{
		Method: "Ping", Queue: "QueuePing", Script: "PingScript", Var: "pingScript",
		Body: "pingBody", Decode: "pingDecode", Call: "pingCall", Calls: "pingCalls",
	}, namesOf(s))
}
