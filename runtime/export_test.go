package runtime

import (
	"context"
	"time"
)

// MergedRun sends calls (KEYS, ARGV pairs) of s as one merged run through
// c, as the leader of a run does, with budget as the run's time budget, and
// returns each call's reply as c.EvalSha returns it and whether it ran.
func MergedRun(ctx context.Context, c *Coalescer, s *Script, budget time.Duration, calls [][2][]string) (vs []Value, errs []error, ran []bool) {
	c.budget = budget
	run := make([]*coalesceCall, len(calls))
	for i, kv := range calls {
		run[i] = &coalesceCall{ctx: ctx, keys: kv[0], args: kv[1], state: running}
	}
	unstarted := c.merged(s, run)
	for _, p := range run {
		vs, errs = append(vs, p.v), append(errs, p.err)
		r := true
		for _, u := range unstarted {
			r = r && u != p
		}
		ran = append(ran, r)
	}
	return vs, errs, ran
}

// SetBudget sets c's run budget.
func SetBudget(c *Coalescer, d time.Duration) { c.budget = d }

// Waiting returns how many calls of s on key's slot wait for the next run.
func Waiting(c *Coalescer, s *Script, key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if q := c.queues[coalesceKey{s: s, slot: int32(Slot(key))}]; q != nil {
		return len(q.pending)
	}
	return 0
}

// SetInFlight sets how many runs per script and slot c keeps in flight.
func SetInFlight(c *Coalescer, n int) { c.inFlight = n }
