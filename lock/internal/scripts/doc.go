// Package scripts holds the lock's generated script wrappers, made from
// lua/lock by luagen. It is internal so that only package lock can run
// them: a caller with Release or Abandon at hand could break the lock's
// invariants (bsm/redislock and rueidislock keep their scripts private too).
package scripts

//go:generate go tool luagen generate ../../../lua/lock
