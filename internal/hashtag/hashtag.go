// Package hashtag finds a Redis Cluster key's hash tag, the one rule both
// runtime's slot math and luatest's KEYS check read keys by.
package hashtag

import "strings"

// Span returns where key's hash tag is, key[i:j] being the text between
// the braces, and ok false when key has none: the first '{', the first '}'
// after it, and non-empty text between them. Only that text is hashed
// when there is one.
// Source: https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#hash-tags
func Span(key string) (i, j int, ok bool) {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return 0, 0, false
	}
	n := strings.IndexByte(key[open+1:], '}')
	if n <= 0 {
		return 0, 0, false
	}
	return open + 1, open + 1 + n, true
}
