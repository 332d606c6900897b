// Package lock benchmarks luagen's lock against bsm/redislock, redsync and
// rueidislock on one redis-server in one run; see lock_test.go.
package lock
