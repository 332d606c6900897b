package luatest

import "slices"

// A list's quicklist nodes (quicklist.c of Redis 7.0): which elements
// share a listpack decides the bytes of DUMP, and depends on the list's
// history (pushes at the head fill nodes from the other end than pushes at
// the tail), so luatest keeps the node sizes the server would have.

// quicklist is the element count and listpack size (lpBytes) of each node,
// head first, and the element count of them all.
type quicklist struct {
	nodes []qlNode
	n     int
}

type qlNode struct{ count, bytes int }

// emptyListpackBytes is lpNew's size: the 6-byte header and the end byte.
const emptyListpackBytes = 7

// lpEntrySize is how many bytes v takes in a listpack (listpack.add): its
// encoding and its back length.
func lpEntrySize(v string) int {
	l := lpStrHeaderSize(len(v)) + len(v)
	if n, ok := parseInt(v); ok {
		l = lpIntSize(n)
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
	q.n++
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
				q.n--
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

// insert is _quicklistInsert for v before or after element p of list
// (the list before the insertion): into p's node when it has room, else
// into the neighbour node at a node's edge, else a new node at the edge,
// else p's node is split around p and its neighbours merged where they
// fit (_quicklistMergeNodes).
func (q *quicklist) insert(list []string, p int, after bool, v string) {
	k, start := 0, 0
	for start+q.nodes[k].count <= p {
		start += q.nodes[k].count
		k++
	}
	o := p - start
	node := q.nodes[k]
	q.n++
	size := lpEntrySize(v)
	full := !node.allowInsert(v)
	atTail := after && o == node.count-1
	atHead := !after && o == 0
	availNext := atTail && k+1 < len(q.nodes) && q.nodes[k+1].allowInsert(v)
	availPrev := atHead && k > 0 && q.nodes[k-1].allowInsert(v)
	grow := func(i int) { q.nodes[i].count++; q.nodes[i].bytes += size }
	fresh := qlNode{1, emptyListpackBytes + size}
	switch {
	case !full:
		grow(k)
	case atTail && availNext:
		grow(k + 1)
	case atHead && availPrev:
		grow(k - 1)
	case atTail:
		q.nodes = slices.Insert(q.nodes, k+1, fresh)
	case atHead:
		q.nodes = slices.Insert(q.nodes, k, fresh)
	default:
		elems := list[start : start+node.count]
		var first, second []string
		center := k
		if after {
			first, second = elems[:o+1], append([]string{v}, elems[o+1:]...)
		} else {
			first, second = append(slices.Clone(elems[:o]), v), elems[o:]
			center = k + 1
		}
		q.nodes[k] = nodeOf(first)
		q.nodes = slices.Insert(q.nodes, k+1, nodeOf(second))
		q.mergeAround(center)
	}
}

func nodeOf(elems []string) qlNode {
	n := qlNode{count: len(elems), bytes: emptyListpackBytes}
	for _, v := range elems {
		n.bytes += lpEntrySize(v)
	}
	return n
}

// mergeAround is _quicklistMergeNodes: the two nodes before the center,
// the two after it, then the center with each neighbour, wherever the
// merged listpack (less one header and end) stays within 8 KB.
func (q *quicklist) mergeAround(c int) {
	fits := func(a, b int) bool {
		return a >= 0 && b >= 0 && a < len(q.nodes) && b < len(q.nodes) &&
			q.nodes[a].bytes+q.nodes[b].bytes-11 <= quicklistNodeMaxBytes
	}
	merge := func(a int) { // a and a+1 into a
		q.nodes[a] = qlNode{q.nodes[a].count + q.nodes[a+1].count, q.nodes[a].bytes + q.nodes[a+1].bytes - emptyListpackBytes}
		q.nodes = append(q.nodes[:a+1], q.nodes[a+2:]...)
	}
	if fits(c-1, c-2) {
		merge(c - 2)
		c--
	}
	if fits(c+1, c+2) {
		merge(c + 1)
	}
	target := c
	if fits(c, c-1) {
		merge(c - 1)
		target = c - 1
	}
	if fits(target, target+1) {
		merge(target)
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

// pop removes the elements popped (in the order popped) from the head or
// the tail, touching only the nodes they were in.
func (q *quicklist) pop(head bool, popped []string) {
	q.n -= len(popped)
	for _, v := range popped {
		k := len(q.nodes) - 1
		if head {
			k = 0
		}
		q.nodes[k].count--
		q.nodes[k].bytes -= lpEntrySize(v)
		if q.nodes[k].count == 0 {
			q.nodes = slices.Delete(q.nodes, k, k+1)
		}
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
		e.list = e.list[n:]
	} else {
		for i := range popped {
			popped[i] = e.list[l-1-i]
		}
		e.list = e.list[:l-n]
	}
	q.pop(head, popped)
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

// listInsert inserts v before or after element p (LINSERT).
func (e *entry) listInsert(p int, after bool, v string) {
	e.qlist().insert(e.list, p, after, v)
	if after {
		p++
	}
	e.list = slices.Insert(e.list, p, v)
}

// listSet replaces element i (LSET).
func (e *entry) listSet(i int, v string) {
	e.qlist().replace(e.list, i, v)
	e.list[i] = v
}

// qlist returns e's quicklist, building it when unknown as pushing every
// element at the tail would.
func (e *entry) qlist() *quicklist {
	if e.ql == nil || e.ql.n != len(e.list) {
		q := &quicklist{}
		for _, v := range e.list {
			q.push(false, v)
		}
		e.ql = q
	}
	return e.ql
}
