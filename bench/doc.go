// Package bench compares luagen with its peers on one redis-server in one
// run. It is a separate module so the peers (bsm/redislock, redsync,
// go-redis, …) never enter luagen's own go.mod. Run it with `make bench`.
package bench
