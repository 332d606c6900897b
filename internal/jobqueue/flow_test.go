package jobqueue_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/internal/exectest"
	"github.com/luagen/luagen/internal/jobqueue"
	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
)

// t0 is the flow's clock: every time a script sees is t0 plus a fixed
// offset the flow passes, so no reply depends on when or where it ran.
var t0 = time.UnixMilli(1_700_000_000_000)

func at(ms int64) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// lease is the lock's time to live: long enough that no lock expires
// during a flow on a busy machine, so that every run sees the same locks.
const lease = 10 * time.Minute

// outcome is what a flow leaves behind: one line per call (the method, its
// job and the reply or the error) and the queue's keyspace before
// Obliterate and at the end.
type outcome struct {
	Calls       []string
	Before, End string
}

// flow calls the generated methods on one queue and records every reply.
type flow struct {
	t     *testing.T
	s     *jobqueue.Scripts
	k     jobqueue.QueueKeys
	calls []string
}

func (f *flow) record(what string, v any, err error) {
	line := what + " -> "
	if err != nil {
		line += "error: " + err.Error()
	} else {
		line += fmt.Sprintf("%+v", v)
	}
	f.calls = append(f.calls, line)
}

var ctx = context.Background()

func (f *flow) addStandard(id, name, data string, ms int64) (string, error) {
	got, err := f.s.AddStandardJob(ctx, f.k.AddStandardJob(), jobqueue.AddStandardJobArgs{
		Prefix: f.k.Prefix, JobID: id, Name: name, Data: data, Timestamp: at(ms)})
	f.record("AddStandardJob "+name, got, err)
	return got, err
}

func (f *flow) addDelayed(id, name string, ms int64, delay time.Duration, priority int64) (string, error) {
	got, err := f.s.AddDelayedJob(ctx, f.k.AddDelayedJob(), jobqueue.AddDelayedJobArgs{
		Prefix: f.k.Prefix, JobID: id, Name: name, Data: `{"n":"` + name + `"}`, Timestamp: at(ms), Delay: delay, Priority: priority})
	f.record("AddDelayedJob "+name, got, err)
	return got, err
}

func (f *flow) addPrioritized(id, name string, ms, priority int64) (string, error) {
	got, err := f.s.AddPrioritizedJob(ctx, f.k.AddPrioritizedJob(), jobqueue.AddPrioritizedJobArgs{
		Prefix: f.k.Prefix, JobID: id, Name: name, Data: `{"n":"` + name + `"}`, Timestamp: at(ms), Priority: priority})
	f.record("AddPrioritizedJob "+name, got, err)
	return got, err
}

func (f *flow) moveToActive(token string, ms int64) (jobqueue.Job, error) {
	got, err := f.s.MoveToActive(ctx, f.k.MoveToActive(), jobqueue.MoveToActiveArgs{
		Prefix: f.k.Prefix, Token: token, LockDuration: lease, Timestamp: at(ms)})
	f.record("MoveToActive "+token, got, err)
	return got, err
}

func (f *flow) extendLock(id, token string) error {
	err := f.s.ExtendLock(ctx, jobqueue.ExtendLockKeys{Job: f.k.Job(id)}, jobqueue.ExtendLockArgs{Token: token, Duration: lease})
	f.record("ExtendLock "+id+" "+token, nil, err)
	return err
}

func (f *flow) finish(id, token string, failed bool, result string, ms, keepLast int64) (int64, error) {
	got, err := f.s.MoveToFinished(ctx, f.k.MoveToFinished(), jobqueue.MoveToFinishedArgs{
		Prefix: f.k.Prefix, JobID: id, Token: token, Failed: failed, Result: result, FinishedOn: at(ms), KeepLast: keepLast})
	f.record(fmt.Sprintf("MoveToFinished %s %s failed=%v", id, token, failed), got, err)
	return got, err
}

func (f *flow) retry(id, token string, ms int64) error {
	err := f.s.RetryJob(ctx, f.k.RetryJob(), jobqueue.RetryJobArgs{Prefix: f.k.Prefix, JobID: id, Token: token, Timestamp: at(ms)})
	f.record("RetryJob "+id+" "+token, nil, err)
	return err
}

func (f *flow) pause() error {
	err := f.s.Pause(ctx, f.k.Pause())
	f.record("Pause", nil, err)
	return err
}

func (f *flow) resume() error {
	err := f.s.Resume(ctx, f.k.Resume())
	f.record("Resume", nil, err)
	return err
}

func (f *flow) counts() (jobqueue.Counts, error) {
	got, err := f.s.GetCounts(ctx, f.k.GetCounts())
	f.record("GetCounts", got, err)
	return got, err
}

func (f *flow) clean(state string, olderThan, limit int64) ([]string, error) {
	got, err := f.s.Clean(ctx, jobqueue.CleanKeys{Finished: f.k.Finished(state), Meta: f.k.Meta, Events: f.k.Events},
		jobqueue.CleanArgs{Prefix: f.k.Prefix, OlderThan: at(olderThan), Limit: limit})
	f.record("Clean "+state, got, err)
	return got, err
}

func (f *flow) addChild(id, name, parent string, ms int64) (string, error) {
	got, err := f.s.AddChildJob(ctx, f.k.AddChildJob(), jobqueue.AddChildJobArgs{
		Prefix: f.k.Prefix, JobID: id, Name: name, Data: `{}`, Timestamp: at(ms), ParentID: parent})
	f.record("AddChildJob "+name+" of "+parent, got, err)
	return got, err
}

// removeWaiting returns the parent's pending children, or -1 for none in
// this queue (a nil reply).
func (f *flow) removeWaiting(id string) (int64, error) {
	got, err := f.s.RemoveWaitingJob(ctx, f.k.RemoveWaitingJob(), jobqueue.RemoveWaitingJobArgs{Prefix: f.k.Prefix, JobID: id})
	n := int64(-1)
	if got != nil {
		n = *got
	}
	f.record("RemoveWaitingJob "+id, n, err)
	return n, err
}

func (f *flow) obliterate(force bool) (int64, error) {
	got, err := f.s.Obliterate(ctx, f.k.Obliterate(), jobqueue.ObliterateArgs{Prefix: f.k.Prefix, Force: force})
	f.record(fmt.Sprintf("Obliterate force=%v", force), got, err)
	return got, err
}

// runFlow runs the job flow on queue through s, asserting each reply as it
// goes (so that a run fails even when every executor returns the same wrong
// thing), and returns the transcript and the keyspace st holds.
func runFlow(t *testing.T, s *jobqueue.Scripts, st store, queue string) outcome {
	f := &flow{t: t, s: s, k: jobqueue.KeysFor("bull", queue)}
	require.Equal(t, "bull:{"+queue+"}:", f.k.Prefix)
	require.Equal(t, "bull:{"+queue+"}:wait", f.k.Wait)
	job := func(id, name, data string, attempts int64) jobqueue.Job {
		return jobqueue.Job{ID: id, Name: name, Data: data, AttemptsMade: attempts}
	}
	noErr := func(err error) { t.Helper(); require.NoError(t, err) }
	is := func(want any, r result) {
		t.Helper()
		require.NoError(t, r.err)
		require.Equal(t, want, r.v)
	}
	fails := func(want error, r result) { t.Helper(); require.ErrorIs(t, r.err, want) }
	counts := func(wait, paused, active, delayed, prioritized, completed, failed int64) jobqueue.Counts {
		return jobqueue.Counts{Wait: wait, Paused: paused, Active: active, Delayed: delayed,
			Prioritized: prioritized, Completed: completed, Failed: failed}
	}
	const w1, w2, w3 = "token-w1", "token-w2", "token-w3"

	// Jobs of each kind; ids come from the queue's counter unless given.
	is("1", res(f.addStandard("", "email", `{"to":"a"}`, 0)))
	is("2", res(f.addStandard("", "email", `{"to":"b"}`, 1)))
	is("job-x", res(f.addStandard("job-x", "report", `{}`, 2)))
	fails(jobqueue.ErrDuplicate, res(f.addStandard("job-x", "report", `{}`, 2)))
	is("3", res(f.addDelayed("", "remind", 3, 5*time.Second, 0)))  // due at 5003
	is("4", res(f.addDelayed("", "digest", 4, 60*time.Second, 3))) // due at 60004, priority 3
	is("5", res(f.addPrioritized("", "resize", 5, 5)))             // priority 5
	is("6", res(f.addPrioritized("", "thumb", 6, 1)))              // priority 1: first
	is("7", res(f.addPrioritized("", "crop", 7, 5)))               // priority 5, after resize
	fails(jobqueue.ErrDuplicate, res(f.addDelayed("4", "again", 8, time.Second, 0)))
	fails(jobqueue.ErrDuplicate, res(f.addPrioritized("1", "again", 9, 1)))
	is(counts(3, 0, 0, 2, 3, 0, 0), res(f.counts()))

	// Prioritized jobs go first, by priority, then in the order added.
	is(job("6", "thumb", `{"n":"thumb"}`, 0), res(f.moveToActive(w1, 1000)))
	is(job("5", "resize", `{"n":"resize"}`, 0), res(f.moveToActive(w2, 1000)))
	noErr(f.extendLock("6", w1))
	fails(jobqueue.ErrWrongToken, result{err: f.extendLock("6", w2)})
	fails(jobqueue.ErrMissingJob, result{err: f.extendLock("99", w1)})
	fails(jobqueue.ErrMissingLock, result{err: f.extendLock("1", w1)}) // waiting, not active
	is(int64(1), res(f.finish("6", w1, false, "ok-6", 1500, 2)))
	fails(jobqueue.ErrMissingLock, res(f.finish("6", w1, false, "ok-6", 1500, 2)))
	fails(jobqueue.ErrWrongToken, res(f.finish("5", w1, true, "boom", 1600, -1)))
	is(int64(1), res(f.finish("5", w2, true, "boom", 1600, -1)))
	fails(jobqueue.ErrMissingJob, res(f.finish("nope", w1, false, "", 1700, 2)))

	// A retried job goes to the head of the line.
	is(job("7", "crop", `{"n":"crop"}`, 0), res(f.moveToActive(w1, 2000)))
	noErr(f.retry("7", w1, 2100))
	fails(jobqueue.ErrMissingLock, result{err: f.retry("7", w1, 2100)})
	fails(jobqueue.ErrMissingJob, result{err: f.retry("98", w1, 2100)})
	// At 6000 the delayed job 3 is due: it joins the wait list's tail.
	is(job("7", "crop", `{"n":"crop"}`, 1), res(f.moveToActive(w1, 6000)))
	is(int64(2), res(f.finish("7", w1, false, "ok-7", 6100, 2)))
	is(job("1", "email", `{"to":"a"}`, 0), res(f.moveToActive(w1, 6200)))
	is(int64(1), res(f.finish("1", w1, false, "ok-1", 6300, 2))) // trims 6

	// Paused, the queue hands out nothing and keeps new jobs aside.
	noErr(f.pause())
	is("8", res(f.addStandard("", "late", `{}`, 7000)))
	fails(jobqueue.ErrNoJob, res(f.moveToActive(w1, 7100)))
	is(counts(0, 4, 0, 1, 0, 2, 1), res(f.counts()))
	noErr(f.resume())
	is(job("2", "email", `{"to":"b"}`, 0), res(f.moveToActive(w1, 7200)))
	is(int64(1), res(f.finish("2", w1, true, "timeout", 7300, -1)))
	is(job("job-x", "report", `{}`, 0), res(f.moveToActive(w1, 7400)))
	is(int64(1), res(f.finish("job-x", w1, false, "ok-x", 7500, 2))) // trims 7

	// At 61000 the delayed job 4 is due, with a priority.
	is(job("4", "digest", `{"n":"digest"}`, 0), res(f.moveToActive(w1, 61000)))
	noErr(f.extendLock("4", w1))
	is(int64(1), res(f.finish("4", w1, true, "bad input", 61100, -1)))
	is(job("3", "remind", `{"n":"remind"}`, 0), res(f.moveToActive(w1, 61200)))
	noErr(f.retry("3", w1, 61300))
	is(job("3", "remind", `{"n":"remind"}`, 1), res(f.moveToActive(w2, 61400)))
	is(int64(2), res(f.finish("3", w2, false, "ok-3", 61500, 2))) // trims 1
	is(job("8", "late", `{}`, 0), res(f.moveToActive(w3, 61600)))
	fails(jobqueue.ErrNoJob, res(f.moveToActive(w3, 61700)))
	is(counts(0, 0, 1, 0, 0, 2, 3), res(f.counts()))

	// Clean deletes finished jobs older than a time, up to a limit.
	is([]string{"5"}, res(f.clean("failed", 7300, 10)))
	is([]string{"job-x"}, res(f.clean("completed", 100_000, 1)))
	is(counts(0, 0, 1, 0, 0, 1, 2), res(f.counts()))
	before := dump(t, st, f.k.Prefix)

	// Obliterate deletes a paused queue, active jobs only with force.
	fails(jobqueue.ErrNotPaused, res(f.obliterate(false)))
	noErr(f.pause())
	fails(jobqueue.ErrActiveJobs, res(f.obliterate(false)))
	is(int64(4), res(f.obliterate(true))) // 8 active, 3 completed, 2 and 4 failed
	is(counts(0, 0, 0, 0, 0, 0, 0), res(f.counts()))
	// The queue starts over: its id counter is gone, and so is paused.
	is("1", res(f.addStandard("", "fresh", `{}`, 70_000)))
	is(counts(1, 0, 0, 0, 0, 0, 0), res(f.counts()))

	// A parent and its children, as BullMQ's flows keep them: removing a
	// child reads its parent's key from its hash and, the parent being in
	// this queue, takes the child off the parent's pending children (keys
	// the cluster lint accepts under if parentPrefix == prefix).
	is("2", res(f.addStandard("", "parent", `{}`, 71_000)))
	is("3", res(f.addChild("", "child-a", "2", 71_001)))
	is("4", res(f.addChild("", "child-b", "2", 71_002)))
	fails(jobqueue.ErrMissingJob, res(f.addChild("", "orphan", "99", 71_003)))
	is(int64(1), res(f.removeWaiting("3")))
	is(int64(0), res(f.removeWaiting("4")))
	is(int64(-1), res(f.removeWaiting("2"))) // no parent
	fails(jobqueue.ErrMissingJob, res(f.removeWaiting("3")))
	is(counts(1, 0, 0, 0, 0, 0, 0), res(f.counts()))

	return outcome{Calls: f.calls, Before: before, End: dump(t, st, f.k.Prefix)}
}

// result is one call's reply or error, for is and fails.
type result struct {
	v   any
	err error
}

func res[T any](v T, err error) result { return result{v, err} }

// checkKeyspace asserts what the flow leaves in the keyspace, beyond
// comparing runs: the keys of the jobs still there, and those of none else.
func checkKeyspace(t *testing.T, o outcome) {
	t.Helper()
	assert.Len(t, o.Calls, 69)
	assert.Equal(t, []string{
		"2 hash", "2:logs list", "3 hash", "4 hash", "4:logs list", "8 hash", "8:lock string ttl",
		"active list", "completed zset", "events stream", "failed zset", "id string", "meta hash", "pc string",
	}, keyTypes(o.Before), "keyspace before Obliterate:\n%s", o.Before)
	assert.Equal(t, []string{"1 hash", "events stream", "id string", "meta hash", "wait list"},
		keyTypes(o.End), "keyspace at the end:\n%s", o.End)
	assert.Contains(t, o.Before, `8:lock string ttl "token-w3"`)
	assert.Contains(t, o.Before, `completed zset ["3 1700000061500"]`)
	assert.Contains(t, o.Before, `failed zset ["2 1700000007300" "4 1700000061100"]`)
	assert.Contains(t, o.Before, `4:logs list ["bad input"]`)
	assert.Contains(t, o.Before, `pc string "4"`)
}

// keyTypes is each line's key and type (and ttl when it has one).
func keyTypes(dump string) []string {
	var out []string
	for _, line := range splitLines(dump) {
		var key, typ, rest string
		fmt.Sscan(line, &key, &typ, &rest)
		kt := key + " " + typ
		if rest == "ttl" {
			kt += " ttl"
		}
		out = append(out, kt)
	}
	return out
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		out = append(out, s[:i])
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}

// luatestFlow runs the flow on luatest with its default KEYS check, which
// takes the keys the scripts build from the queue's prefix because they
// start with a declared key's text up to its hash tag (bull:{q}).
func luatestFlow(t *testing.T) outcome {
	r := luatest.Start(t, luatest.WithTime(t0))
	o := runFlow(t, jobqueue.New(r), luatestStore{r}, "q")
	checkKeyspace(t, o)
	return o
}

func TestFlowLuatest(t *testing.T) {
	luatestFlow(t)
}

// TestFlowRedis runs the flow on redis-server through both executors and
// compares every reply and the keyspace with luatest's.
func TestFlowRedis(t *testing.T) {
	want := luatestFlow(t)
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		srv := redistest.Start(t)
		got := runFlow(t, jobqueue.New(k.Single(t, srv)), rueidisStore{srv.Client(t)}, "q")
		checkKeyspace(t, got)
		assert.Equal(t, want, got)
	})
}

// TestFlowCluster runs the flow on a 3+3 cluster through both executors,
// each on a queue of its own: the keys the scripts build from the prefix
// are on the queue's slot, or the cluster would refuse them.
func TestFlowCluster(t *testing.T) {
	want := luatestFlow(t)
	c := redistest.StartCluster(t)
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		got := runFlow(t, jobqueue.New(k.Cluster(t, c)), rueidisStore{c.Client(t)}, "q-"+k.Name)
		checkKeyspace(t, got)
		assert.Equal(t, want, got)
	})
}

// TestPrefixWithoutTag: a key prefix that does not carry the queue's hash
// tag (left empty, written by hand, another queue's) fails with
// runtime.ErrBadArg before anything is sent, on luatest and on
// redis-server through both executors: the keys the script would build
// from it are on another slot, or no queue's.
func TestPrefixWithoutTag(t *testing.T) {
	k := jobqueue.KeysFor("bull", "q")
	for _, prefix := range []string{"", "bull:q:", jobqueue.KeysFor("bull", "other").Prefix, "bull:{}:"} {
		args := jobqueue.AddStandardJobArgs{Prefix: prefix, Name: "n", Data: "{}", Timestamp: t0}
		r := luatest.Start(t, luatest.WithTime(t0))
		_, err := jobqueue.New(r).AddStandardJob(ctx, k.AddStandardJob(), args)
		require.ErrorIs(t, err, runtime.ErrBadArg, "prefix %q", prefix)
		var bad *runtime.BadArgError
		require.ErrorAs(t, err, &bad)
		assert.Equal(t, "prefix", bad.Arg)
		assert.Empty(t, r.Keys(), "prefix %q: nothing is sent", prefix)
		exectest.Run(t, func(t *testing.T, kind exectest.Kind) {
			srv := redistest.Start(t)
			_, err := jobqueue.New(kind.Single(t, srv)).AddStandardJob(ctx, k.AddStandardJob(), args)
			require.ErrorIs(t, err, runtime.ErrBadArg, "prefix %q", prefix)
			n, err := srv.Client(t).Do(ctx, srv.Client(t).B().Dbsize().Build()).AsInt64()
			require.NoError(t, err)
			assert.Zero(t, n, "prefix %q: nothing is sent", prefix)
		})
	}
	r := luatest.Start(t, luatest.WithTime(t0))
	id, err := jobqueue.New(r).AddStandardJob(ctx, k.AddStandardJob(), jobqueue.AddStandardJobArgs{Prefix: k.Prefix, Name: "n", Data: "{}", Timestamp: t0})
	require.NoError(t, err)
	assert.Equal(t, "1", id)
}
