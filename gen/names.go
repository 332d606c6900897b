package gen

import (
	"go/token"
	"strings"
	"unicode"
	"unicode/utf8"
)

// initialisms are the words Go spells in one case (Effective Go, and the
// list golint used), plus the domain words luagen's users name things with.
var initialisms = map[string]bool{
	"ACL": true, "API": true, "ASCII": true, "CPU": true, "CSS": true, "DNS": true,
	"EOF": true, "GUID": true, "HTML": true, "HTTP": true, "HTTPS": true, "ID": true,
	"IP": true, "JSON": true, "LHS": true, "QPS": true, "RAM": true, "RHS": true,
	"RPC": true, "SLA": true, "SMTP": true, "SQL": true, "SSH": true, "TCP": true,
	"TLS": true, "TTL": true, "UDP": true, "UI": true, "GID": true, "UID": true,
	"UUID": true, "URI": true, "URL": true, "UTF8": true, "VM": true, "XML": true,
	"XMPP": true, "XSRF": true, "XSS": true, "SKU": true, "PTTL": true,
}

// words splits an annotation name into words at '_', '-', '.', spaces and
// case changes: "holdCount" → hold Count, "NoSuchSKU" → No Such SKU,
// "HTTPServer" → HTTP Server, "sku_id" → sku id.
func words(s string) []string {
	var out []string
	rs := []rune(s)
	start := 0
	flush := func(end int) {
		if end > start {
			out = append(out, string(rs[start:end]))
		}
		start = end
	}
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if r == '_' || r == '-' || r == '.' || r == ' ' {
			flush(i)
			start = i + 1
			continue
		}
		if i == start {
			continue
		}
		prev := rs[i-1]
		switch {
		case unicode.IsUpper(r) && unicode.IsLower(prev), unicode.IsUpper(r) && unicode.IsDigit(prev):
			flush(i) // holdCount, utf8Name
		case unicode.IsUpper(r) && unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
			flush(i) // HTTPServer: the S starts a word
		}
	}
	flush(len(rs))
	return out
}

// pascal returns the exported Go name for an annotation name, with Go's
// initialisms: ttl → TTL, holdCount → HoldCount, sku_id → SKUID,
// userUrl → UserURL, HOLD_COUNT → HoldCount.
func pascal(s string) string {
	var b strings.Builder
	for _, w := range words(s) {
		up := strings.ToUpper(w)
		switch {
		case initialisms[up]:
			b.WriteString(up)
		case w == up:
			// An all-caps word that is no initialism: HOLD → Hold.
			r, n := utf8.DecodeRuneInString(w)
			b.WriteRune(r)
			b.WriteString(strings.ToLower(w[n:]))
		default:
			r, n := utf8.DecodeRuneInString(w)
			b.WriteRune(unicode.ToUpper(r))
			b.WriteString(w[n:])
		}
	}
	return b.String()
}

// lowerCamel returns an unexported name for a Go name: Deduct → deduct,
// URLFetch → urlFetch.
func lowerCamel(goName string) string {
	ws := words(goName)
	if len(ws) == 0 {
		return ""
	}
	ws[0] = strings.ToLower(ws[0])
	return strings.Join(ws, "")
}

// isIdent reports whether s is a Go identifier and not a keyword.
func isIdent(s string) bool {
	return token.IsIdentifier(s)
}

// isExported reports whether s is an exported Go identifier.
func isExported(s string) bool {
	return token.IsIdentifier(s) && token.IsExported(s)
}

// isLuaName reports whether s is a name as annotations use them: ASCII
// letters, digits and '_', not starting with a digit.
func isLuaName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// closest returns the candidate nearest to s by edit distance when it is
// near enough to be a plausible typo, else "".
func closest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(s), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if bestD > len(s)/2 && bestD > 1 {
		return ""
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and transpositions of neighbours (kye → key) each
// cost 1.
func editDistance(a, b string) int {
	rows := make([][]int, len(a)+1)
	for i := range rows {
		rows[i] = make([]int, len(b)+1)
		rows[i][0] = i
	}
	for j := range rows[0] {
		rows[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			rows[i][j] = min(rows[i-1][j]+1, rows[i][j-1]+1, rows[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				rows[i][j] = min(rows[i][j], rows[i-2][j-2]+1)
			}
		}
	}
	return rows[len(a)][len(b)]
}
