package runtime

import (
	"context"
	"time"
)

// ReplicaWaiter is an optional interface of an [Executor]: it runs a
// script and then WAIT on the same connection, in one round trip, so that
// WAIT waits for the replication offset of the script's own writes
// (https://redis.io/docs/latest/commands/wait/: WAIT "blocks the current
// client until all the previous write commands are successfully
// transferred and acknowledged by at least the number of replicas you
// specify"; previous writes of that connection, Redis 7.0 server.c call
// sets the client's woff after each command that propagated). Sent on
// another connection, WAIT would wait for nothing of the script's, or
// for another client's writes.
//
// [RueidisExecutor] and runtime/goredis' Executor implement it. The lock
// package uses it for acquisitions acknowledged by replicas.
type ReplicaWaiter interface {
	Executor
	// EvalShaWait is [Executor.EvalSha] followed by WAIT w.Replicas
	// w.Timeout on the connection that ran the script. The script's
	// reply and error are returned as EvalSha returns them; WAIT's
	// outcome is written to w (only when the script did not fail).
	EvalShaWait(ctx context.Context, s *Script, keys, args []string, w *Wait) (Value, error)
	// EvalWait is [Executor.Eval] followed by WAIT, as EvalShaWait.
	EvalWait(ctx context.Context, s *Script, keys, args []string, w *Wait) (Value, error)
}

// Wait is the WAIT that follows a script on a [ReplicaWaiter]: what to
// ask, and what the server answered.
type Wait struct {
	// Replicas is WAIT's numreplicas: how many replicas to wait for.
	Replicas int64
	// Timeout is WAIT's timeout, sent as whole milliseconds (at least 1:
	// WAIT's 0 would block forever).
	Timeout time.Duration

	// Acked is WAIT's reply: how many replicas acknowledged every write
	// the connection sent up to and including the script's. It is 0 when
	// Err is set.
	Acked int64
	// Err is why WAIT failed while the script did not: an error reply
	// (Redis answers "ERR WAIT cannot be used with replica instances" on
	// a node that was demoted to a replica, where a MOVED or a Sentinel
	// switch sent the script elsewhere) or a lost connection. The
	// script's writes are then of unknown replication.
	Err error
}

// Millis is w.Timeout as WAIT's argument: whole ms, at least 1.
func (w *Wait) Millis() int64 {
	return max(int64(w.Timeout/time.Millisecond), 1)
}
