package luatest

import (
	"encoding/binary"
	"maps"
	"slices"
	"sort"
)

// The stream's radix tree of listpacks (t_stream.c) as DUMP writes it
// (rdbSaveObject, RDB_TYPE_STREAM_LISTPACKS_2) and RESTORE reads it.

// Stream node limits of 7.0's built-in configuration and the entry flags
// of a node's listpack.
const (
	streamNodeMaxBytes    = 4096 // stream-node-max-bytes
	streamItemDeleted     = 1    // STREAM_ITEM_FLAG_DELETED
	streamItemSameFields  = 2    // STREAM_ITEM_FLAG_SAMEFIELDS
	streamIDBytes         = 16   // a streamID in a rax key: ms and seq, big endian
	rdbStreamListpacksVer = rdbTypeStreamLP2
)

// appendNode returns the node an entry with these fields and values goes
// to, starting a new one as streamAppendItem does: when the stream has no
// node, or the tail node's listpack plus the entry's fields and values
// would reach stream-node-max-bytes, or the node has taken
// stream-node-max-entries (live and deleted).
func (s *streamValue) appendNode(fv []string) int64 {
	if len(s.entries) > 0 {
		tail := s.entries[len(s.entries)-1].node
		lp, _, count := s.nodeListpack(tail)
		size := 0
		for _, x := range fv {
			size += len(x)
		}
		if len(lp)+size < streamNodeMaxBytes && count < streamNodeMaxEntries {
			return tail
		}
	}
	s.node++
	return s.node
}

// nodeEntries returns the entries of a node, live and deleted, in ID
// order, and whether each is deleted.
func (s *streamValue) nodeEntries(node int64) ([]streamEntry, []bool) {
	var out []streamEntry
	var dead []bool
	i, j := sort.Search(len(s.entries), func(k int) bool { return s.entries[k].node >= node }), 0
	for j < len(s.tombs) && s.tombs[j].node < node {
		j++
	}
	for {
		liveOK := i < len(s.entries) && s.entries[i].node == node
		tombOK := j < len(s.tombs) && s.tombs[j].node == node
		switch {
		case liveOK && (!tombOK || s.entries[i].id.cmp(s.tombs[j].id) < 0):
			out, dead = append(out, s.entries[i]), append(dead, false)
			i++
		case tombOK:
			out, dead = append(out, s.tombs[j]), append(dead, true)
			j++
		default:
			return out, dead
		}
	}
}

// nodeListpack builds a node's listpack as streamAppendItem and
// streamIteratorRemoveEntry leave it: the master entry (live count,
// deleted count, the first entry's field names, 0), then every entry
// (flags, ID difference from the master, the field count and names unless
// they are the master's, the values, the entry's element count). master
// is the master entry's ID, the node's key in the radix tree; count is how
// many entries the node has taken.
func (s *streamValue) nodeListpack(node int64) (lp []byte, master streamID, count int) {
	entries, dead := s.nodeEntries(node)
	if len(entries) == 0 {
		return nil, streamID{}, 0
	}
	first := entries[0]
	var masterFields []string
	for k := 0; k < len(first.fields); k += 2 {
		masterFields = append(masterFields, first.fields[k])
	}
	deleted := 0
	for _, d := range dead {
		if d {
			deleted++
		}
	}
	b := newListpack()
	b.addInt(int64(len(entries) - deleted))
	b.addInt(int64(deleted))
	b.addInt(int64(len(masterFields)))
	for _, f := range masterFields {
		b.add(f)
	}
	b.addInt(0)
	for k, e := range entries {
		nf := len(e.fields) / 2
		same := nf == len(masterFields)
		for x := 0; same && x < nf; x++ {
			same = e.fields[2*x] == masterFields[x]
		}
		flags := int64(0)
		if same {
			flags |= streamItemSameFields
		}
		if dead[k] {
			flags |= streamItemDeleted
		}
		b.addInt(flags)
		b.addInt(int64(e.id.ms - first.id.ms))
		b.addInt(int64(e.id.seq - first.id.seq))
		if !same {
			b.addInt(int64(nf))
		}
		for x := 0; x < nf; x++ {
			if !same {
				b.add(e.fields[2*x])
			}
			b.add(e.fields[2*x+1])
		}
		elems := nf + 3
		if !same {
			elems += nf + 1
		}
		b.addInt(int64(elems))
	}
	return b.bytes(), first.id, len(entries)
}

func appendStreamID(b []byte, id streamID) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(b, id.ms), id.seq)
}

func appendRDBStreamID(b []byte, id streamID) []byte {
	return appendRDBLen(appendRDBLen(b, id.ms), id.seq)
}

// nodes returns the radix-tree nodes that hold live entries, in order: a
// node whose entries are all deleted is gone.
func (s *streamValue) nodes() []int64 {
	var nodes []int64
	for _, e := range s.entries {
		if len(nodes) == 0 || nodes[len(nodes)-1] != e.node {
			nodes = append(nodes, e.node)
		}
	}
	return nodes
}

// appendRDBStream is rdbSaveObject for a stream.
func appendRDBStream(b []byte, s *streamValue) []byte {
	nodes := s.nodes()
	b = appendRDBLen(append(b, rdbStreamListpacksVer), uint64(len(nodes)))
	for _, n := range nodes {
		lp, master, _ := s.nodeListpack(n)
		b = appendRDBString(b, string(appendStreamID(nil, master)))
		b = appendRDBString(b, string(lp))
	}
	b = appendRDBLen(b, uint64(len(s.entries)))
	b = appendRDBStreamID(b, s.lastID)
	b = appendRDBStreamID(b, s.firstID())
	b = appendRDBStreamID(b, s.maxDeleted)
	b = appendRDBLen(b, uint64(s.entriesAdded))
	b = appendRDBLen(b, uint64(len(s.groups)))
	for _, name := range slices.Sorted(maps.Keys(s.groups)) {
		g := s.groups[name]
		b = appendRDBString(b, name)
		b = appendRDBStreamID(b, g.lastID)
		b = appendRDBLen(b, uint64(g.entriesRead))
		ids := slices.SortedFunc(maps.Keys(g.pel), streamID.cmp)
		b = appendRDBLen(b, uint64(len(ids)))
		for _, id := range ids {
			b = appendStreamID(b, id)
			b = binary.LittleEndian.AppendUint64(b, uint64(g.pel[id].delivered))
			b = appendRDBLen(b, uint64(g.pel[id].count))
		}
		b = appendRDBLen(b, uint64(len(g.consumers)))
		for _, cn := range slices.Sorted(maps.Keys(g.consumers)) {
			c := g.consumers[cn]
			b = appendRDBString(b, cn)
			b = binary.LittleEndian.AppendUint64(b, uint64(c.seen))
			ids := slices.SortedFunc(maps.Keys(c.pel), streamID.cmp)
			b = appendRDBLen(b, uint64(len(ids)))
			for _, id := range ids {
				b = appendStreamID(b, id)
			}
		}
	}
	return b
}

// rdbLoadStream reads a stream of RDB_TYPE_STREAM_LISTPACKS (Redis 5 to
// 6.2: no first ID, deleted-entry ID, entries-added count or groups'
// entries-read, which are derived as the server derives them) or
// RDB_TYPE_STREAM_LISTPACKS_2 (7.0).
func rdbLoadStream(rd *rdbReader, v2 bool) (*entry, bool) {
	s := &streamValue{groups: map[string]*streamGroup{}}
	nodes, ok := rd.length()
	if !ok {
		return nil, false
	}
	for n := uint64(0); n < nodes; n++ {
		key, ok1 := rd.str()
		blob, ok2 := rd.str()
		if !ok1 || !ok2 || len(key) != streamIDBytes {
			return nil, false
		}
		master := streamIDFrom([]byte(key))
		items, ok := listpackItems(blob)
		if !ok || !s.loadNode(master, items) {
			return nil, false
		}
	}
	length, ok1 := rd.length()
	last, ok2 := rd.streamID()
	if !ok1 || !ok2 || length != uint64(len(s.entries)) {
		return nil, false
	}
	s.lastID = last
	s.entriesAdded = int64(length)
	if v2 {
		_, ok1 := rd.streamID() // the first ID: the first entry's
		maxDel, ok2 := rd.streamID()
		added, ok3 := rd.length()
		if !ok1 || !ok2 || !ok3 {
			return nil, false
		}
		s.maxDeleted, s.entriesAdded = maxDel, int64(added)
	}
	groups, ok := rd.length()
	if !ok {
		return nil, false
	}
	for n := uint64(0); n < groups; n++ {
		name, ok1 := rd.str()
		last, ok2 := rd.streamID()
		if !ok1 || !ok2 || s.groups[name] != nil {
			return nil, false
		}
		g := &streamGroup{lastID: last, pel: map[streamID]*pendingEntry{}, consumers: map[string]*streamConsumer{}}
		if v2 {
			read, ok := rd.length()
			if !ok {
				return nil, false
			}
			g.entriesRead = int64(read)
		} else {
			g.entriesRead = s.distance(last)
		}
		pel, ok := rd.length()
		if !ok {
			return nil, false
		}
		for k := uint64(0); k < pel; k++ {
			id, ok1 := rd.rawStreamID()
			t, ok2 := rd.bytes(8)
			count, ok3 := rd.length()
			if !ok1 || !ok2 || !ok3 {
				return nil, false
			}
			g.pel[id] = &pendingEntry{delivered: int64(binary.LittleEndian.Uint64(t)), count: int64(count)}
		}
		consumers, ok := rd.length()
		if !ok {
			return nil, false
		}
		for k := uint64(0); k < consumers; k++ {
			cn, ok1 := rd.str()
			t, ok2 := rd.bytes(8)
			npel, ok3 := rd.length()
			if !ok1 || !ok2 || !ok3 {
				return nil, false
			}
			c := &streamConsumer{seen: int64(binary.LittleEndian.Uint64(t)), pel: map[streamID]bool{}}
			for x := uint64(0); x < npel; x++ {
				id, ok := rd.rawStreamID()
				if !ok || g.pel[id] == nil {
					return nil, false
				}
				g.pel[id].consumer = cn
				c.pel[id] = true
			}
			g.consumers[cn] = c
		}
		for _, p := range g.pel {
			if p.consumer == "" { // a pending entry no consumer owns
				return nil, false
			}
		}
		s.groups[name] = g
	}
	return &entry{kind: typeStream, stream: s}, true
}

// loadNode adds the entries of one node's listpack (items as
// listpackItems returns them).
func (s *streamValue) loadNode(master streamID, items []string) bool {
	p := 0
	num := func() (int64, bool) {
		if p >= len(items) {
			return 0, false
		}
		v, ok := parseInt(items[p])
		p++
		return v, ok
	}
	str := func() (string, bool) {
		if p >= len(items) {
			return "", false
		}
		p++
		return items[p-1], true
	}
	live, ok1 := num()
	deleted, ok2 := num()
	nmaster, ok3 := num()
	if !ok1 || !ok2 || !ok3 || live+deleted == 0 || nmaster < 0 {
		return false
	}
	masterFields := make([]string, nmaster)
	for k := range masterFields {
		f, ok := str()
		if !ok {
			return false
		}
		masterFields[k] = f
	}
	if z, ok := num(); !ok || z != 0 {
		return false
	}
	s.node++
	var got int64
	for p < len(items) {
		flags, ok1 := num()
		dms, ok2 := num()
		dseq, ok3 := num()
		if !ok1 || !ok2 || !ok3 {
			return false
		}
		e := streamEntry{id: streamID{master.ms + uint64(dms), master.seq + uint64(dseq)}, node: s.node}
		if flags&streamItemSameFields != 0 {
			for _, f := range masterFields {
				v, ok := str()
				if !ok {
					return false
				}
				e.fields = append(e.fields, f, v)
			}
		} else {
			nf, ok := num()
			if !ok || nf < 0 {
				return false
			}
			for k := int64(0); k < nf; k++ {
				f, ok1 := str()
				v, ok2 := str()
				if !ok1 || !ok2 {
					return false
				}
				e.fields = append(e.fields, f, v)
			}
		}
		if _, ok := num(); !ok { // the entry's element count
			return false
		}
		if flags&streamItemDeleted != 0 {
			s.tombs = append(s.tombs, e)
		} else {
			if n := len(s.entries); n > 0 && s.entries[n-1].id.cmp(e.id) >= 0 {
				return false
			}
			s.entries = append(s.entries, e)
			got++
		}
	}
	return got == live
}

// streamID reads an ID as two RDB lengths.
func (rd *rdbReader) streamID() (streamID, bool) {
	ms, ok1 := rd.length()
	seq, ok2 := rd.length()
	return streamID{ms, seq}, ok1 && ok2
}

// rawStreamID reads an ID as 16 raw bytes, big endian.
func (rd *rdbReader) rawStreamID() (streamID, bool) {
	b, ok := rd.bytes(streamIDBytes)
	if !ok {
		return streamID{}, false
	}
	return streamIDFrom(b), true
}

// streamIDFrom reads an ID from its 16 big-endian bytes (streamDecodeID),
// as node keys and raw IDs store it.
func streamIDFrom(b []byte) streamID {
	return streamID{binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:])}
}
