module github.com/luagen/luagen/bench

go 1.26.0

replace github.com/luagen/luagen => ../

require (
	github.com/alicebob/miniredis/v2 v2.40.0
	github.com/bsm/redislock v0.9.4
	github.com/go-redsync/redsync/v4 v4.18.1
	github.com/luagen/luagen v0.0.0-00010101000000-000000000000
	github.com/redis/go-redis/v9 v9.23.0
	github.com/redis/rueidis v1.0.79
	golang.org/x/sys v0.49.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/yuin/gopher-lua v1.1.2 // indirect
	go.uber.org/atomic v1.12.0 // indirect
)

tool github.com/luagen/luagen/cmd/luagen
