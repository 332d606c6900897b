package luatest

import (
	"github.com/luagen/luagen/luatest/internal/engine"
	"github.com/luagen/luagen/luatest/resp"
)

func init() {
	engine.Of = func(r any) engine.Engine { return wireEngine{r.(*Redis)} }
}

// wireEngine is a Redis as package luatest/server drives it: one
// selected database per connection, and an observer of writes and
// published messages (see package luatest/internal/engine).
type wireEngine struct{ r *Redis }

func (e wireEngine) Do(db *int, proto int, args []string) resp.Reply {
	e.r.lock()
	defer e.r.mu.Unlock()
	return e.r.doIn(db, proto, args)
}

func (e wireEngine) Atomic(fn func(do func(db *int, proto int, args []string) resp.Reply)) {
	e.r.lock()
	defer e.r.mu.Unlock()
	fn(e.r.doIn)
}

func (e wireEngine) Check(args []string) (resp.Reply, bool) {
	if len(args) == 0 {
		return resp.ErrorReply("ERR luatest: empty command"), false
	}
	if _, bad := check(args); bad != nil {
		return *bad, false
	}
	return resp.Reply{}, true
}

func (e wireEngine) Observe(o engine.Observer) {
	e.r.lock()
	defer e.r.mu.Unlock()
	e.r.observer = o
}

func (wireEngine) Match(pattern, s string) bool { return globMatch(pattern, s, false) }

// doIn runs args with r.mu held for a client whose selected database is
// *db, and puts back the database the callers of Do and Command selected.
func (r *Redis) doIn(db *int, proto int, args []string) resp.Reply {
	if proto != 2 && proto != 3 {
		return resp.ErrorReply("ERR luatest: protocol must be 2 or 3")
	}
	if len(args) == 0 {
		return resp.ErrorReply("ERR luatest: empty command")
	}
	own := r.dbIndex
	r.selectDB(*db)
	defer func() {
		*db = r.dbIndex
		r.selectDB(own)
	}()
	return r.command(proto, args)
}

// touched tells the observer, if any, that key of database db may have
// changed ("" for every key of db, db -1 for every database).
func (r *Redis) touched(db int, key string) {
	if r.observer != nil {
		r.observer.Touched(db, key)
	}
}
