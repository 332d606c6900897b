package server

import (
	"strings"

	"github.com/luagen/luagen/luatest/resp"
)

// watch is a WATCHed key, and whether it existed with an expiry then:
// Redis 7.0 aborts EXEC when such a key has expired since
// (isWatchedKeyExpired in multi.c), and luatest's expiry, on the virtual
// clock, deletes lazily, so EXEC checks that it still exists.
type watch struct {
	dbKey
	volatile bool
}

// WATCH key [key ...] — https://redis.io/commands/watch/
func (c *conn) watch(keys []string) {
	if c.multi {
		c.write(resp.ErrorReply("ERR WATCH inside MULTI is not allowed"))
		return
	}
	for _, k := range keys {
		w := watch{dbKey: dbKey{c.db, k}}
		db := c.db
		w.volatile = c.s.eng.Do(&db, 2, []string{"PTTL", k}).Int >= 0
		c.s.mu.Lock()
		if !c.watching(w.dbKey) {
			c.watched = append(c.watched, w)
			cs := c.s.watchers[w.dbKey]
			if cs == nil {
				cs = map[*conn]struct{}{}
				c.s.watchers[w.dbKey] = cs
			}
			cs[c] = struct{}{}
		}
		c.s.mu.Unlock()
	}
	c.write(resp.OK)
}

func (c *conn) watching(k dbKey) bool {
	for _, w := range c.watched {
		if w.dbKey == k {
			return true
		}
	}
	return false
}

// unwatch forgets every watched key (unwatchAllKeys).
func (c *conn) unwatch() {
	c.s.mu.Lock()
	c.unwatchLocked()
	c.s.mu.Unlock()
}

func (c *conn) unwatchLocked() {
	for _, w := range c.watched {
		if cs := c.s.watchers[w.dbKey]; cs != nil {
			delete(cs, c)
			if len(cs) == 0 {
				delete(c.s.watchers, w.dbKey)
			}
		}
	}
	c.watched = nil
	c.dirty = false
}

// discard ends a MULTI without running it (discardTransaction keeps the
// watched keys: the caller unwatches).
func (c *conn) discard() {
	c.multi, c.queued, c.multiErr = false, nil, false
	c.unwatch()
}

// EXEC — https://redis.io/commands/exec/ (execCommand): EXECABORT after a
// refused command, a null array when a watched key changed, else every
// queued command's reply in one array, run with no other command between
// them. A command that writes more than one reply (SUBSCRIBE a b) writes
// them all, in the array, as the server does.
func (c *conn) exec() {
	if !c.multi {
		c.write(resp.ErrorReply("ERR EXEC without MULTI"))
		return
	}
	queued, failed := c.queued, c.multiErr
	c.multi, c.queued, c.multiErr = false, nil, false
	if failed {
		c.unwatch()
		c.write(resp.ErrorReply("EXECABORT Transaction discarded because of previous errors."))
		return
	}
	c.s.eng.Atomic(func(do func(db *int, proto int, args []string) resp.Reply) {
		c.s.mu.Lock()
		dirty := c.dirty
		watched := c.watched
		c.s.mu.Unlock()
		for _, w := range watched {
			db := w.db
			if w.volatile && do(&db, 2, []string{"EXISTS", w.key}).Int == 0 {
				dirty = true
			}
		}
		c.unwatch()
		if dirty {
			c.write(resp.NullArray)
			return
		}
		c.send(func(b []byte) []byte { return appendInt(b, '*', int64(len(queued))) })
		for _, args := range queued {
			c.run(strings.ToLower(args[0]), args, do, true)
		}
	})
}
