package luatest

// A list's quicklist nodes (quicklist.c of Redis 7.0): which elements
// share a listpack decides the bytes of DUMP, and depends on the list's
// history (pushes at the head fill nodes from the other end than pushes at
// the tail), so luatest keeps the node sizes the server would have.

// quicklist is the element count and listpack size (lpBytes) of each node,
// head first.
type quicklist struct{ nodes []qlNode }

type qlNode struct{ count, bytes int }

// emptyListpackBytes is lpNew's size: the 6-byte header and the end byte.
const emptyListpackBytes = 7

// lpEntrySize is how many bytes v takes in a listpack: its encoding and
// its back length.
func lpEntrySize(v string) int {
	var l int
	if n, ok := parseInt(v); ok {
		switch {
		case n >= 0 && n <= 127:
			l = 1
		case n >= -4096 && n <= 4095:
			l = 2
		case n >= -1<<15 && n < 1<<15:
			l = 3
		case n >= -1<<23 && n < 1<<23:
			l = 4
		case n >= -1<<31 && n < 1<<31:
			l = 5
		default:
			l = 9
		}
	} else {
		switch {
		case len(v) < 64:
			l = 1 + len(v)
		case len(v) < 4096:
			l = 2 + len(v)
		default:
			l = 5 + len(v)
		}
	}
	return l + backlenSize(uint64(l))
}

// allowInsert is _quicklistNodeAllowInsert for list-max-listpack-size -2:
// the node's listpack, the element and 8 bytes of overhead within 8 KB.
func (n qlNode) allowInsert(v string) bool {
	return n.bytes+len(v)+quicklistSizeOverhead <= quicklistNodeMaxBytes
}

// push is quicklistPushHead or quicklistPushTail.
func (q *quicklist) push(head bool, v string) {
	size := lpEntrySize(v)
	switch {
	case len(q.nodes) == 0:
		q.nodes = []qlNode{{1, emptyListpackBytes + size}}
	case head && q.nodes[0].allowInsert(v):
		q.nodes[0].count++
		q.nodes[0].bytes += size
	case head:
		q.nodes = append([]qlNode{{1, emptyListpackBytes + size}}, q.nodes...)
	case q.nodes[len(q.nodes)-1].allowInsert(v):
		q.nodes[len(q.nodes)-1].count++
		q.nodes[len(q.nodes)-1].bytes += size
	default:
		q.nodes = append(q.nodes, qlNode{1, emptyListpackBytes + size})
	}
}

// remove drops the elements of list (the list before the removal) that
// keep says go, as quicklistDelIndex does: a node left empty is freed,
// nodes are never merged.
func (q *quicklist) remove(list []string, keep func(i int) bool) {
	var out []qlNode
	i := 0
	for _, n := range q.nodes {
		left := n
		for k := 0; k < n.count; k++ {
			if !keep(i) {
				left.count--
				left.bytes -= lpEntrySize(list[i])
			}
			i++
		}
		if left.count > 0 {
			out = append(out, left)
		}
	}
	q.nodes = out
}

// replace is quicklistReplaceEntry for an element that is not huge: the
// listpack entry is replaced in place.
func (q *quicklist) replace(list []string, i int, v string) {
	for k := range q.nodes {
		if i < q.nodes[k].count {
			q.nodes[k].bytes += lpEntrySize(v) - lpEntrySize(list[i])
			return
		}
		i -= q.nodes[k].count
	}
}

// The list operations, keeping e.list and its quicklist in step.

// listPush adds v at the head or the tail.
func (e *entry) listPush(head bool, v string) {
	e.qlist().push(head, v)
	if head {
		e.list = append(e.list, "")
		copy(e.list[1:], e.list)
		e.list[0] = v
	} else {
		e.list = append(e.list, v)
	}
}

// listPop removes n elements from the head or the tail and returns them
// in the order they were popped.
func (e *entry) listPop(head bool, n int) []string {
	q := e.qlist()
	l := len(e.list)
	popped := make([]string, n)
	if head {
		copy(popped, e.list[:n])
		q.remove(e.list, func(i int) bool { return i >= n })
		e.list = e.list[n:]
	} else {
		for i := range popped {
			popped[i] = e.list[l-1-i]
		}
		q.remove(e.list, func(i int) bool { return i < l-n })
		e.list = e.list[:l-n]
	}
	return popped
}

// listKeep keeps the elements keep says stay (LREM, LTRIM).
func (e *entry) listKeep(keep func(i int) bool) {
	e.qlist().remove(e.list, keep)
	var out []string
	for i, v := range e.list {
		if keep(i) {
			out = append(out, v)
		}
	}
	e.list = out
}

// listSet replaces element i (LSET).
func (e *entry) listSet(i int, v string) {
	e.qlist().replace(e.list, i, v)
	e.list[i] = v
}

// qlist returns e's quicklist, building it when unknown as pushing every
// element at the tail would.
func (e *entry) qlist() *quicklist {
	if e.ql == nil || e.ql.len() != len(e.list) {
		q := &quicklist{}
		for _, v := range e.list {
			q.push(false, v)
		}
		e.ql = q
	}
	return e.ql
}

func (q *quicklist) len() int {
	n := 0
	for _, nd := range q.nodes {
		n += nd.count
	}
	return n
}
