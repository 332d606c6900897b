// Package jobqueue is a small job queue written as BullMQ writes its
// scripts (issue 32, the job flow): every script calls Redis through
// local rcall = redis.call, inlines its helpers from includes/ with
// --- @include "includes/name" below that line, takes the queue's keys
// in KEYS laid out as BullMQ lays them out (bull:{q}:wait, built by
// KeysFor("bull", "q")), and builds each job's keys from the queue's
// prefix bull:{q}: (prefix .. jobId, jobKey .. ':lock', jobKey .. ':logs'),
// also inside helpers that take the prefix as a parameter. The scripts
// pass luagen's default, cluster-safe checks with no ---@unsafe-keys:
// every key they build starts with the prefix, which carries the queue's
// hash tag.
//
// A job is added ready (AddStandardJob), delayed (AddDelayedJob) or with a
// priority (AddPrioritizedJob); MoveToActive promotes the delayed jobs due
// at the time the caller passes and hands out the next job under a lock
// (jobKey:lock, a token with a time to live) that ExtendLock keeps;
// MoveToFinished and RetryJob end an attempt, checking the token. Pause and
// Resume move the ready jobs between the wait and paused lists, GetCounts
// counts the jobs in each state, Clean deletes old finished jobs and
// Obliterate a paused queue. AddChildJob adds a job with a parent in the
// same queue, and RemoveWaitingJob removes a ready job, reading its
// parent's key from its hash as BullMQ does and, only when the parent's
// prefix is the queue's (if parentPrefix == prefix), taking it off the
// parent's pending children: a key read from data that the cluster lint
// accepts because that guard proves it in the queue's slot. Times come from the caller, so a run is
// deterministic but for the events stream's entry ids and lock lifetimes.
//
// Its tests run one flow of calls through the generated methods on luatest,
// on redis-server through both executors and on a 3+3 cluster, and compare
// every reply and the final keyspace.
package jobqueue

//go:generate go tool luagen generate .
