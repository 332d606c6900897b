// Package ratelimit limits how often a subject (a user, an API key, an IP
// address) may act, with two Redis Lua scripts that luagen turns into typed
// Go:
//
//   - allow.lua, a sliding-window log: at most limit requests in any span of
//     window ([SlidingWindow]);
//   - take.lua, a token bucket: bursts of up to burst requests, refilled at
//     one token per interval ([TokenBucket]).
//
// It is an example of a service that uses luagen from a module of its own:
// the scripts sit next to this package, the go:generate line below turns
// them into allow.lua.go, take.lua.go and scripts.lua.go (the generated
// [Scripts.Allow] and [Scripts.Take]), limiter.go is the small hand-written
// API over them, and the tests run the same scripts offline on luatest's
// virtual clock and on a real redis-server and Redis Cluster started by
// redistest.
//
//	limiter := ratelimit.NewSlidingWindow(runtime.NewRueidisExecutor(client), 100, time.Minute)
//	d, err := limiter.Allow(ctx, "user:42", requestID)
//	switch {
//	case err != nil: // Redis unreachable: fail open or closed, as the service prefers
//	case !d.Allowed:
//		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(d.RetryAfter.Seconds()))))
//		w.WriteHeader(http.StatusTooManyRequests)
//	}
//
// The limiters take any [runtime.Executor]: runtime.NewRueidisExecutor above, or, for a
// service on go-redis v9, goredis.NewExecutor(rdb) from
// github.com/luagen/luagen/runtime/goredis with a *redis.Client or a
// *redis.ClusterClient; the tests run every contract through both.
//
// Both scripts take the time from the caller ("now", in ms) rather than
// from the server, so tests drive them with a clock of their own; callers
// that share a key should share a clock (hosts synchronized by NTP do).
package ratelimit

//go:generate go tool luagen generate .
