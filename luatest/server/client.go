package server

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/luagen/luagen/luatest/resp"
)

// HELLO [protover [AUTH username password] [SETNAME clientname]] —
// https://redis.io/commands/hello/ (helloCommand in networking.c): the
// options are all checked before anything changes; the reply is in the
// new protocol.
func (c *conn) hello(args []string) {
	proto := int(c.proto.Load())
	if len(args) > 0 {
		v, err := strconv.ParseInt(args[0], 10, 64)
		if err != nil {
			c.write(resp.ErrorReply("ERR Protocol version is not an integer or out of range"))
			return
		}
		if v < 2 || v > 3 {
			c.write(resp.ErrorReply("NOPROTO unsupported protocol version"))
			return
		}
		proto = int(v)
	}
	var user, pass, name *string
	for i := 1; i < len(args); i++ {
		more := len(args) - i - 1
		switch opt := strings.ToLower(args[i]); {
		case opt == "auth" && more >= 2:
			user, pass = &args[i+1], &args[i+2]
			i += 2
		case opt == "setname" && more >= 1:
			name = &args[i+1]
			i++
		default:
			c.write(resp.ErrorReply("ERR Syntax error in HELLO option '" + args[i] + "'"))
			return
		}
	}
	if user != nil && !c.authenticate(*user, *pass) {
		return
	}
	if !c.authed {
		c.write(resp.ErrorReply("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"))
		return
	}
	if name != nil && !c.setName(*name) {
		return
	}
	c.proto.Store(int32(proto))
	c.write(c.mapReply(proto,
		"server", resp.BulkReply("redis"),
		"version", resp.BulkReply("7.0.15"),
		"proto", resp.IntReply(int64(proto)),
		"id", resp.IntReply(c.id),
		"mode", resp.BulkReply("standalone"),
		"role", resp.BulkReply("master"),
		"modules", resp.ArrayReply(),
	))
}

// mapReply builds a map (a flat array in RESP2) from name, value pairs.
func (c *conn) mapReply(proto int, kvs ...any) resp.Reply {
	r := resp.Reply{Kind: resp.Array}
	if proto == 3 {
		r.Kind = resp.Map
	}
	for i := 0; i+1 < len(kvs); i += 2 {
		r.Elems = append(r.Elems, resp.BulkReply(kvs[i].(string)), kvs[i+1].(resp.Reply))
	}
	return r
}

// AUTH [username] password — https://redis.io/commands/auth/
func (c *conn) auth(args []string) {
	if len(args) > 2 {
		c.write(resp.ErrorReply("ERR syntax error"))
		return
	}
	if len(args) == 1 && c.s.password == "" {
		c.write(resp.ErrorReply("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"))
		return
	}
	user, pass := "default", args[len(args)-1]
	if len(args) == 2 {
		user = args[0]
	}
	if c.authenticate(user, pass) {
		c.write(resp.OK)
	}
}

// authenticate checks the default user's password (the only user) and
// answers WRONGPASS when it is not; without a password every password
// works for "default", as for the server's nopass default user.
func (c *conn) authenticate(user, pass string) bool {
	if user != "default" || (c.s.password != "" && pass != c.s.password) {
		c.write(resp.ErrorReply("WRONGPASS invalid username-password pair or user is disabled."))
		return false
	}
	c.authed = true
	return true
}

// RESET — https://redis.io/commands/reset/ (clearClientConnectionState):
// MULTI discarded, keys unwatched, subscriptions dropped without a reply,
// database 0, RESP2, no name, and authentication again when a password is
// set.
func (c *conn) reset() {
	c.discard()
	c.unwatch()
	c.s.mu.Lock()
	c.unsubscribeAllLocked()
	c.name = ""
	c.s.mu.Unlock()
	c.db = 0
	c.proto.Store(2)
	c.authed = c.s.password == ""
	c.write(resp.StatusReply("RESET"))
}

// setName is CLIENT SETNAME's check and change; it answers the error.
func (c *conn) setName(name string) bool {
	for _, r := range name {
		if r < '!' || r > '~' {
			c.write(resp.ErrorReply("ERR Client names cannot contain spaces, newlines or special characters."))
			return false
		}
	}
	c.s.mu.Lock()
	c.name = name
	c.s.mu.Unlock()
	return true
}

// CLIENT ID | GETNAME | SETNAME | INFO | LIST | KILL | TRACKING |
// GETREDIR | NO-EVICT | PAUSE | UNPAUSE — https://redis.io/commands/client/;
// what else the server knows (HELP, and its errors) the engine answers.
func (c *conn) client(args []string, do doFunc) (quit bool) {
	sub := strings.ToLower(args[0])
	switch {
	case sub == "id" && len(args) == 1:
		c.write(resp.IntReply(c.id))
	case sub == "getname" && len(args) == 1:
		c.s.mu.Lock()
		name := c.name
		c.s.mu.Unlock()
		if name == "" {
			c.write(resp.NilReply)
			return
		}
		c.write(resp.BulkReply(name))
	case sub == "setname" && len(args) == 2:
		if c.setName(args[1]) {
			c.write(resp.OK)
		}
	case sub == "info" && len(args) == 1:
		c.s.mu.Lock()
		line := c.infoLocked()
		c.s.mu.Unlock()
		c.write(c.verbatim(line))
	case sub == "list":
		c.clientList(args[1:])
	case sub == "kill":
		return c.clientKill(args[1:])
	case sub == "tracking" && len(args) >= 2:
		c.clientTracking(args[1:])
	case sub == "caching" && len(args) == 2:
		c.clientCaching(args[1])
	case sub == "getredir" && len(args) == 1:
		c.write(resp.IntReply(-1))
	case sub == "no-evict" && len(args) == 2, sub == "pause" && len(args) >= 2, sub == "unpause" && len(args) == 1:
		c.write(resp.OK)
	case sub == "reply" || sub == "unblock":
		// Not served: an error, so that a client does not take the
		// engine's answer (CLIENT's help) for success.
		c.write(resp.ErrorReply("ERR luatest: CLIENT " + strings.ToUpper(sub) + " is not implemented by luatest"))
	default:
		c.write(do(&c.db, int(c.proto.Load()), append([]string{"CLIENT"}, args...)))
	}
	return false
}

// verbatim is a RESP3 verbatim string (a bulk string in RESP2), as CLIENT
// INFO and CLIENT LIST answer.
func (c *conn) verbatim(s string) resp.Reply {
	if c.proto.Load() == 3 {
		return resp.Reply{Kind: resp.Verbatim, Str: s}
	}
	return resp.BulkReply(s)
}

// infoLocked is the connection's CLIENT LIST line (catClientInfoString),
// with s.mu held. Memory and buffer fields are 0: luatest does not
// measure them.
func (c *conn) infoLocked() string {
	cmd := "NULL"
	if p := c.lastCmd.Load(); p != nil {
		cmd = *p
	}
	flags := "N"
	switch {
	case c.blocked.Load():
		flags = "b"
	case c.nsubs > 0:
		flags = "P"
	}
	multi := -1
	now := time.Now()
	return fmt.Sprintf("id=%d addr=%s laddr=%s fd=8 name=%s age=%d idle=0 flags=%s db=%d sub=%d psub=%d ssub=%d multi=%d qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd=%s user=default redir=-1 resp=%d\n",
		c.id, c.nc.RemoteAddr(), c.nc.LocalAddr(), c.name, int(now.Sub(c.created).Seconds()), flags, c.shownDB.Load(),
		len(c.subs), len(c.psubs), len(c.ssubs), multi, cmd, c.proto.Load())
}

// CLIENT LIST [TYPE normal|master|replica|pubsub] [ID client-id ...]
func (c *conn) clientList(args []string) {
	var ids []int64
	typ := ""
	for i := 0; i < len(args); i++ {
		switch strings.ToLower(args[i]) {
		case "type":
			if i+1 >= len(args) {
				c.write(resp.ErrorReply("ERR syntax error"))
				return
			}
			typ = strings.ToLower(args[i+1])
			if typ != "normal" && typ != "master" && typ != "replica" && typ != "slave" && typ != "pubsub" {
				c.write(resp.ErrorReply("ERR Unknown client type '" + args[i+1] + "'"))
				return
			}
			i++
		case "id":
			for i++; i < len(args); i++ {
				id, err := strconv.ParseInt(args[i], 10, 64)
				if err != nil || id <= 0 {
					c.write(resp.ErrorReply("ERR Invalid client ID"))
					return
				}
				ids = append(ids, id)
			}
		default:
			c.write(resp.ErrorReply("ERR syntax error"))
			return
		}
	}
	c.s.mu.Lock()
	var all []*conn
	for o := range c.s.conns {
		if o.killed || len(ids) > 0 && !slices.Contains(ids, o.id) {
			continue
		}
		switch typ {
		case "master", "replica", "slave": // luatest has none
			continue
		case "pubsub", "normal":
			if (typ == "pubsub") != (o.nsubs > 0) {
				continue
			}
		}
		all = append(all, o)
	}
	slices.SortFunc(all, func(a, b *conn) int { return int(a.id - b.id) })
	var b strings.Builder
	for _, o := range all {
		b.WriteString(o.infoLocked())
	}
	c.s.mu.Unlock()
	c.write(c.verbatim(b.String()))
}

// CLIENT KILL ip:port, or CLIENT KILL [ID id] [ADDR ip:port] [LADDR
// ip:port] [SKIPME yes|no] [USER name] [TYPE type]: the old form answers
// OK or "No such client", the new one the number killed.
func (c *conn) clientKill(args []string) (quit bool) {
	var id int64
	var addr, laddr, typ, user string
	skipMe, old := true, len(args) == 1
	if old {
		addr, skipMe = args[0], false
	} else {
		if len(args)%2 != 0 {
			c.write(resp.ErrorReply("ERR syntax error"))
			return false
		}
		for i := 0; i < len(args); i += 2 {
			v := args[i+1]
			switch strings.ToLower(args[i]) {
			case "id":
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil || n <= 0 {
					c.write(resp.ErrorReply("ERR client-id should be greater than 0"))
					return false
				}
				id = n
			case "addr":
				addr = v
			case "laddr":
				laddr = v
			case "type":
				typ = strings.ToLower(v)
			case "user":
				user = v
			case "skipme":
				switch strings.ToLower(v) {
				case "yes":
					skipMe = true
				case "no":
					skipMe = false
				default:
					c.write(resp.ErrorReply("ERR syntax error"))
					return false
				}
			default:
				c.write(resp.ErrorReply("ERR syntax error"))
				return false
			}
		}
	}
	c.s.mu.Lock()
	var victims []*conn
	for o := range c.s.conns {
		switch {
		case id != 0 && o.id != id,
			addr != "" && o.nc.RemoteAddr().String() != addr,
			laddr != "" && o.nc.LocalAddr().String() != laddr,
			user != "" && user != "default",
			typ != "" && typ != "normal" && (typ != "pubsub" || o.nsubs == 0),
			typ == "normal" && o.nsubs > 0,
			skipMe && o == c,
			o.killed:
			continue
		}
		o.killed = true
		victims = append(victims, o)
	}
	c.s.mu.Unlock()
	if old && len(victims) == 0 {
		c.write(resp.ErrorReply("ERR No such client"))
		return false
	}
	self := false
	for _, o := range victims {
		if o == c {
			self = true // after the reply, as the server closes it after writing
			continue
		}
		o.nc.Close()
	}
	if old {
		c.write(resp.OK)
	} else {
		c.write(resp.IntReply(int64(len(victims))))
	}
	return self
}

// CONFIG GET parameter [parameter ...] | SET parameter value [parameter
// value ...] | RESETSTAT | REWRITE — https://redis.io/commands/config-get/.
// GET answers the defaults of redis-server 7.0.15 for the parameters
// clients and scripts read, or what CONFIG SET stored; SET stores a value
// for a parameter GET knows and changes nothing else in luatest (no
// eviction, no other encoding limits).
func (c *conn) configCmd(args []string, do doFunc) {
	proto := int(c.proto.Load())
	switch sub := strings.ToLower(args[1]); {
	case sub == "get" && len(args) >= 3:
		s := c.s
		s.mu.Lock()
		var names []string
		for name := range s.config {
			for _, p := range args[2:] {
				if s.eng.Match(strings.ToLower(p), name) {
					names = append(names, name)
					break
				}
			}
		}
		slices.Sort(names)
		var kvs []any
		for _, n := range names {
			kvs = append(kvs, n, resp.BulkReply(s.config[n]))
		}
		s.mu.Unlock()
		c.write(c.mapReply(proto, kvs...))
	case sub == "set" && len(args) >= 4 && len(args)%2 == 0:
		s := c.s
		s.mu.Lock()
		defer s.mu.Unlock()
		for i := 2; i < len(args); i += 2 {
			if _, ok := s.config[strings.ToLower(args[i])]; !ok {
				c.write(resp.ErrorReply("ERR Unknown option or number of arguments for CONFIG SET - '" + args[i] + "'"))
				return
			}
		}
		for i := 2; i < len(args); i += 2 {
			s.config[strings.ToLower(args[i])] = args[i+1]
		}
		c.write(resp.OK)
	case sub == "rewrite" && len(args) == 2:
		c.write(resp.ErrorReply("ERR The server is running without a config file"))
	default:
		c.write(do(&c.db, proto, args))
	}
}
