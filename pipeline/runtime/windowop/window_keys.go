package windowop

import "github.com/etld/etld/pipeline/runtime/state"

// keyIDs numbers the GROUP BY keys of a WindowAgg's open slices: each
// key held by some slice has an id, and a slice indexes its groups by
// that id (slice.index), a slot by its key's id (WindowAgg.slotKid). The
// keys live in a state.KeyIDs, whose index, entries and arena hold no
// pointer: a lookup hashes a short key (a name, a number) from two words
// and compares two words, where a Go map of strings hashed and compared
// the bytes; and nothing per slot or per slice holds a pointer for the
// GC to scan (in batch mode every slice of the input stays open until
// the end: M-hopkey's 2,000 slices of 1,000 keys). A key's string, which
// the output rows' STRING values point into, is made once per id, for
// all the slots that hold it. A merge of a window's slices, or a step's
// slice into a CUMULATE cycle, matches groups by id without hashing their
// keys again. A key's id is freed when the last slice holding it goes.
//
// By id, at is the newest open slice holding the key (by seq, slices
// being numbered as they open) and the key's slot there, or seq 0 when
// that is not known (that slice was freed while older ones hold the
// key). A row of a key in that slice (rows in time order: 4 rows in 5
// of M-hopkey, a new slice every 5,000 rows of 1,000 keys) finds its
// slot there; a row in a slice newer than it (the key's first row in a
// new slice) knows the key has no slot there: neither looks into the
// slice's index, which is built only for a row that goes back to an
// older slice (rows out of order) or one whose key's newest slice is not
// known, and a CUMULATE cycle's merges. A HOP window's merge matches its
// slices' groups through marks by key id (markSlots), without an index.
type keyIDs struct {
	t    *state.KeyIDs
	strs []string // by id: the key as a string; "" for a free id
	refs []int32  // by id: the slices holding the key
	at   []kidAt  // by id
}

// kidAt is a slice holding a key (its seq) and the key's slot there;
// seq 0: not known.
type kidAt struct {
	seq  uint32
	slot int32
}

func newKeyIDs() keyIDs { return keyIDs{t: state.NewKeyIDs()} }

// of is key's id, given one (with no reference yet) if it has none.
func (k *keyIDs) of(key []byte) int32 {
	h := k.t.Hash(key)
	if id, ok := k.t.FindHashed(key, h); ok {
		return id
	}
	id, fresh := k.t.AddHashed(key, h)
	if fresh {
		k.strs = append(k.strs, string(key))
		k.refs = append(k.refs, 0)
		k.at = append(k.at, kidAt{})
	} else {
		k.strs[id], k.refs[id], k.at[id] = string(key), 0, kidAt{}
	}
	return id
}

// key is id's key, a string shared by all its slots.
func (k *keyIDs) key(id int32) string { return k.strs[id] }

// unref drops a slice's reference to id, freeing it with the last one.
// It reports whether id was freed.
func (k *keyIDs) unref(id int32) bool {
	if k.refs[id]--; k.refs[id] > 0 {
		return false
	}
	k.drop(id)
	return true
}

// drop frees id.
func (k *keyIDs) drop(id int32) {
	k.t.DropID(id, k.t.Hash(k.t.Bytes(id)))
	k.strs[id], k.refs[id], k.at[id] = "", 0, kidAt{}
}

// len is the number of ids in use.
func (k *keyIDs) len() int { return k.t.Len() }

// newer reports whether slice number a was given after b, in serial
// number arithmetic: the numbers wrap after 4 billion slices, and the
// open ones span far fewer.
func newer(a, b uint32) bool { return int32(a-b) > 0 }

// slot returns the slot of the row's key (kbuf) in w, allocating one.
func (g *WindowAgg) slot(w *slice) int32 {
	if !g.hasKid || string(g.lastKey) != string(g.kbuf) {
		g.lastKid, g.hasKid = g.kids.of(g.kbuf), true
		g.lastKey = append(g.lastKey[:0], g.kbuf...)
	} else if g.lastW == w {
		return g.lastID
	}
	kid := g.lastKid
	at := g.kids.at[kid]
	id := at.slot
	switch {
	case at.seq == w.seq && at.seq != 0:
	case g.kids.refs[kid] == 0 || (at.seq != 0 && newer(w.seq, at.seq)):
		id = g.newSlot(w, kid) // newer than every slice holding the key
	default:
		var ok bool
		if id, ok = g.find(w, kid); !ok {
			id = g.newSlot(w, kid)
		} else if at.seq == 0 && w.seq == g.seq {
			g.kids.at[kid] = kidAt{w.seq, id} // the newest slice of all
		}
	}
	g.lastW, g.lastID = w, id
	return id
}

// find returns kid's slot in w, building w's index if it has none.
func (g *WindowAgg) find(w *slice, kid int32) (int32, bool) {
	if !w.indexed {
		if w.index == nil {
			w.index = make(map[int32]int32, len(w.order))
		}
		for j, id := range w.order {
			w.index[w.kids[j]] = id
		}
		w.indexed = true
		g.indexed += int64(len(w.order))
	}
	id, ok := w.index[kid]
	return id, ok
}

// newSlot allocates key id kid's slot in w, which has none.
func (g *WindowAgg) newSlot(w *slice, kid int32) int32 {
	id := g.st.Alloc("")
	if int(id) >= len(g.slotKid) {
		g.slotKid = append(g.slotKid, make([]int32, int(id)+1-len(g.slotKid))...)
	}
	g.slotKid[id] = kid
	at := &g.kids.at[kid]
	switch {
	case g.kids.refs[kid] == 0, at.seq != 0 && newer(w.seq, at.seq), at.seq == 0 && w.seq == g.seq:
		*at = kidAt{w.seq, id} // w is the newest slice holding the key
	}
	g.kids.refs[kid]++
	if w.indexed {
		w.index[kid] = id
		g.indexed++
	}
	w.order = append(w.order, id)
	w.kids = append(w.kids, kid)
	return id
}

// markSlots marks w's slots by key id (marks, a slot + 1) for a merge
// into w; newSlot does not mark the slots it adds: the merge does.
func (g *WindowAgg) markSlots(w *slice) {
	if n := len(g.kids.refs); len(g.marks) < n {
		g.marks = append(g.marks, make([]int32, n-len(g.marks))...)
	}
	for j, id := range w.order {
		g.marks[w.kids[j]] = id + 1
	}
}

// unmarkSlots clears the marks of w's slots.
func (g *WindowAgg) unmarkSlots(w *slice) {
	for _, kid := range w.kids {
		g.marks[kid] = 0
	}
}

// release frees w's slots and its references to their keys.
func (g *WindowAgg) release(w *slice) {
	for j, id := range w.order {
		g.st.Release(id)
		g.slotKid[id] = -1
		kid := w.kids[j]
		if g.kids.at[kid].seq == w.seq {
			g.kids.at[kid] = kidAt{} // older slices may hold the key: not known
		}
		g.kids.unref(kid)
	}
	if w.indexed {
		g.indexed -= int64(len(w.index))
		clear(w.index)
		w.indexed = false
	}
	w.order, w.kids = w.order[:0], w.kids[:0]
	// A freed key id may be given to another key; the slot to another
	// slice.
	g.hasKid, g.lastW = false, nil
}
