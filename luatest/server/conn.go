package server

import (
	"bufio"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/luagen/luagen/luatest/resp"
)

// conn is one client connection. Three goroutines serve it: the reader
// parses requests, the processor runs them in order (and is the one that
// blocks in BLPOP) and writes its replies, and the writer sends what
// other connections' PUBLISH (and invalidations) put in its output, so a
// subscriber that reads slowly never stalls the server.
type conn struct {
	s       *Server
	nc      net.Conn
	id      int64
	created time.Time

	reqs     chan request  // reader → processor; closed when the reader stops
	gone     chan struct{} // closed when the reader stops: the peer left
	procDone chan struct{} // closed when the processor stops

	outMu   sync.Mutex
	out     []byte
	outSig  chan struct{} // a token when others added to out, for the writer
	writeMu sync.Mutex    // held while out is written to the socket
	wbuf    []byte        // the buffer being written, under writeMu

	proto   atomic.Int32 // 2 or 3; others' PUBLISH reads it
	shownDB atomic.Int32 // the selected database, for CLIENT LIST
	lastCmd atomic.Pointer[string]
	blocked atomic.Bool // in a blocking command, for CLIENT LIST's flags=b

	// Guarded by s.mu: other connections read or change them.
	name        string
	dirty       bool                // a WATCHed key changed
	subs        map[string]struct{} // SUBSCRIBE
	psubs       map[string]struct{} // PSUBSCRIBE
	ssubs       map[string]struct{} // SSUBSCRIBE
	nsubs       int                 // len(subs)+len(psubs)+len(ssubs)
	trackedKeys map[string]struct{} // the keys s.tracked holds for it (CLIENT TRACKING)
	killed      bool                // CLIENT KILL closed it: gone for CLIENT LIST and KILL already

	// The processor's own.
	db       int
	authed   bool
	multi    bool       // inside MULTI
	queued   [][]string // MULTI's commands
	multiErr bool       // a command was refused while queuing: EXEC aborts
	watched  []watch
	track    tracking // CLIENT TRACKING
}

// request is what the reader hands the processor: a command, or the
// protocol error that ends the connection.
type request struct {
	args []string
	err  *protocolError
}

func newConn(s *Server, nc net.Conn, id int64) *conn {
	c := &conn{
		s: s, nc: nc, id: id, created: time.Now(),
		reqs:     make(chan request, 64),
		gone:     make(chan struct{}),
		procDone: make(chan struct{}),
		outSig:   make(chan struct{}, 1),
		subs:     map[string]struct{}{},
		psubs:    map[string]struct{}{},
		ssubs:    map[string]struct{}{},
		authed:   s.password == "",
	}
	c.proto.Store(2)
	return c
}

// start runs the connection's goroutines.
func (c *conn) start() {
	c.s.wg.Add(3)
	go c.readLoop()
	go c.process()
	go c.writeLoop()
}

func (c *conn) readLoop() {
	defer c.s.wg.Done()
	defer close(c.gone)
	defer close(c.reqs)
	r := bufio.NewReaderSize(c.nc, 16<<10)
	for {
		args, err := readCommand(r)
		var req request
		switch pe := (*protocolError)(nil); {
		case errors.As(err, &pe):
			req.err = pe
		case err != nil:
			return
		case len(args) == 0:
			continue
		default:
			req.args = args
		}
		select {
		case c.reqs <- req:
		case <-c.procDone:
			return
		}
		if req.err != nil {
			return
		}
	}
}

func (c *conn) process() {
	defer c.s.wg.Done()
	defer c.finish()
	for req := range c.reqs {
		if req.err != nil {
			c.write(resp.ErrorReply("ERR " + req.err.Error()))
			return
		}
		if c.handle(req.args) {
			return
		}
		if len(c.reqs) == 0 && c.flush() != nil {
			return
		}
	}
}

// finish forgets the connection (its subscriptions and watched keys, a
// MULTI in progress) and lets the writer send what is left and close it.
func (c *conn) finish() {
	s := c.s
	s.mu.Lock()
	c.unsubscribeAllLocked()
	c.unwatchLocked()
	c.untrackLocked()
	delete(s.conns, c)
	s.mu.Unlock()
	close(c.procDone)
}

func (c *conn) writeLoop() {
	defer c.s.wg.Done()
	defer c.nc.Close()
	for {
		select {
		case <-c.outSig:
			if c.flush() != nil {
				return
			}
		case <-c.procDone:
			c.flush()
			return
		}
	}
}

// flush writes the output to the socket. The processor flushes its own
// replies when it has no request left to run or is about to wait (one
// write for a pipeline, and no hand-off to the writer), the writer what
// other connections add; writeMu keeps their writes in output order.
func (c *conn) flush() error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.outMu.Lock()
	c.wbuf, c.out = c.out, c.wbuf[:0]
	c.outMu.Unlock()
	if len(c.wbuf) == 0 {
		return nil
	}
	_, err := c.nc.Write(c.wbuf)
	if err != nil {
		c.nc.Close() // the reader stops, and with it the processor
	}
	return err
}

// send appends bytes made by f to the output and wakes the writer: for
// what other goroutines (PUBLISH, invalidations) send.
func (c *conn) send(f func(b []byte) []byte) {
	c.outMu.Lock()
	c.out = f(c.out)
	c.outMu.Unlock()
	select {
	case c.outSig <- struct{}{}:
	default:
	}
}

// write adds the processor's reply r, in the connection's protocol, to
// the output, which the processor flushes itself.
func (c *conn) write(r resp.Reply) {
	proto := int(c.proto.Load())
	c.outMu.Lock()
	c.out = appendReply(c.out, r, proto)
	c.outMu.Unlock()
}

// push sends a pub/sub message (see appendPush).
func (c *conn) push(kind string, strs ...*string) {
	c.pushCount(kind, nil, strs...)
}

func (c *conn) pushCount(kind string, count *int64, strs ...*string) {
	proto := int(c.proto.Load())
	c.send(func(b []byte) []byte { return appendPush(b, proto, kind, strs, count) })
}

// doFunc runs a command on the engine for a client (engine.Engine's Do,
// or the do of its Atomic).
type doFunc func(db *int, proto int, args []string) resp.Reply

// noMultiQueue are the commands MULTI runs at once instead of queuing.
var noMultiQueue = map[string]bool{"exec": true, "discard": true, "multi": true, "watch": true, "quit": true, "reset": true}

// subscribedOK are the commands a RESP2 client may send while subscribed.
var subscribedOK = map[string]bool{"subscribe": true, "unsubscribe": true, "psubscribe": true, "punsubscribe": true,
	"ssubscribe": true, "sunsubscribe": true, "ping": true, "quit": true, "reset": true}

// handle runs one command as processCommand does: the command table's
// checks, authentication, the RESP2 pub/sub context, MULTI's queue, then
// the command. It reports whether the connection ends.
func (c *conn) handle(args []string) (quit bool) {
	name := strings.ToLower(args[0])
	c.lastCmd.Store(&name)
	defer func() { c.shownDB.Store(int32(c.db)) }()
	if reply, ok := c.s.eng.Check(args); !ok {
		c.flagMulti()
		c.write(reply)
		return false
	}
	if !c.authed && name != "auth" && name != "hello" && name != "quit" && name != "reset" {
		c.flagMulti()
		c.write(resp.ErrorReply("NOAUTH Authentication required."))
		return false
	}
	if c.proto.Load() == 2 && c.subscribed() && !subscribedOK[name] {
		c.write(resp.ErrorReply("ERR Can't execute '" + fullName(args) + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"))
		return false
	}
	if c.multi && !noMultiQueue[name] {
		c.queued = append(c.queued, args)
		c.write(resp.StatusReply("QUEUED"))
		return false
	}
	defer c.endCommand(name)
	return c.run(name, args, c.s.eng.Do, false)
}

// fullName is a command's name as the server's error texts give it:
// lower case, "client|id" for a subcommand.
func fullName(args []string) string {
	name := strings.ToLower(args[0])
	switch name {
	case "client", "config", "pubsub", "command", "script", "function", "object", "xinfo", "memory", "cluster", "acl", "slowlog", "latency", "module", "xgroup":
		if len(args) > 1 {
			return name + "|" + strings.ToLower(args[1])
		}
	}
	return name
}

// flagMulti marks a MULTI in progress as failed (flagTransaction).
func (c *conn) flagMulti() {
	if c.multi {
		c.multiErr = true
	}
}

// run runs a checked command: the connection's own commands here, the
// others on the engine through do. inExec is set for a command EXEC runs:
// it may not block, as in a script.
func (c *conn) run(name string, args []string, do doFunc, inExec bool) (quit bool) {
	proto := int(c.proto.Load())
	switch name {
	case "quit":
		c.write(resp.OK)
		return true
	case "hello":
		c.hello(args[1:])
	case "auth":
		c.auth(args[1:])
	case "reset":
		c.reset()
	case "client":
		return c.client(args[1:], do)
	case "config":
		c.configCmd(args, do)
	case "multi":
		if c.multi {
			c.write(resp.ErrorReply("ERR MULTI calls can not be nested"))
			return false
		}
		c.multi = true
		c.write(resp.OK)
	case "exec":
		c.exec()
	case "discard":
		if !c.multi {
			c.write(resp.ErrorReply("ERR DISCARD without MULTI"))
			return false
		}
		c.discard()
		c.write(resp.OK)
	case "watch":
		c.watch(args[1:])
	case "unwatch":
		c.unwatch()
		c.write(resp.OK)
	case "subscribe", "psubscribe", "ssubscribe":
		c.subscribe(name, args[1:])
	case "unsubscribe", "punsubscribe", "sunsubscribe":
		c.unsubscribe(name, args[1:])
	case "pubsub":
		c.pubsub(args, do)
	case "ping":
		if proto == 2 && c.subscribed() {
			msg := ""
			if len(args) > 1 {
				msg = args[1]
			}
			c.write(resp.BulkArray([]string{"pong", msg}))
			return false
		}
		c.write(do(&c.db, proto, args))
	case "blpop", "brpop", "blmove", "brpoplpush", "bzpopmin", "bzpopmax", "blmpop", "bzmpop", "xread", "xreadgroup", "wait":
		if inExec {
			c.write(do(&c.db, proto, args))
			return false
		}
		c.block(name, args)
	default:
		c.trackRead(args)
		c.write(do(&c.db, proto, args))
	}
	return false
}
