// Package replycode is the one list of error-reply codes that Redis clients
// and luagen's runtime read as the server's own. runtime marks a script's
// returned error reply that starts with one of them (runtime/wire.go), and
// gen reports a script that declares or sends one (gen/replycheck.go).
package replycode

// Reserved maps each code to what reads it. Sources: rueidis v1.0.79
// message.go (IsMoved, IsAsk, IsRedirect, IsTryAgain, IsLoading,
// IsClusterDown, IsNoScript: byte prefixes, after dropping a leading
// "ERR "), cluster.go and client.go (retries on them); go-redis v9.23.0
// error.go (shouldRetry, isMovedError) and internal/proto/redis_errors.go
// (typed errors: "CODE " prefixes); luagen's runtime/retry.go
// (transientCodes) and runtime/errors.go (IsNoScript).
var Reserved = map[string]string{
	"NOSCRIPT":    "the runtime takes it for a script missing from the cache and runs the script again with EVAL",
	"MOVED":       "cluster clients take it for a slot redirection",
	"ASK":         "cluster clients take it for a slot migration redirection",
	"REDIRECT":    "rueidis takes it for a redirection to another server",
	"BUSY":        "clients take it for a server busy with another script and retry",
	"LOADING":     "clients take it for a server still loading its data and retry",
	"TRYAGAIN":    "clients take it for a slot migration in progress and retry",
	"CLUSTERDOWN": "clients take it for a cluster that lost a shard and retry",
	"READONLY":    "clients take it for a write sent to a replica and retry",
	"MASTERDOWN":  "clients take it for a replica that lost its primary and retry",
	"NOREPLICAS":  "go-redis takes it for a write the replicas did not acknowledge and retries",
	"OOM":         "go-redis reads it as the server out of memory",
	"NOAUTH":      "go-redis reads it as an authentication failure",
	"WRONGPASS":   "go-redis reads it as an authentication failure",
	"NOPERM":      "go-redis reads it as an ACL refusal",
	"EXECABORT":   "go-redis reads it as an aborted transaction",
	"CROSSSLOT":   "clients and the runtime read it as keys in different slots",
}
