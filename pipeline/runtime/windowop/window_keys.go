package windowop

// keyIDs numbers the GROUP BY keys of a WindowAgg's open slices: each
// key held by some slice has an id, and a slice indexes its groups by
// that id (slice.index). A slice's index then holds no pointer, and
// the GC, which scanned every slice's map of key strings (in batch mode
// every slice of the input stays open until the end: M-hopkey's 2,000
// slices of 1,000 keys), skips it; a key's string is made once for all
// the slices that hold it, where each slice made its own; and a merge
// of a window's slices, or a step's slice into a CUMULATE cycle, matches
// groups by id without hashing their keys again. A key's id is freed
// when the last slice holding it goes.
//
// By id, at is the slice where the key's last row went and its slot
// there: a row of a key in the slice of its key's row before it (rows
// in time order: 4 rows in 5 of M-hopkey, a new slice every 5,000 rows
// of 1,000 keys) finds its slot without the slice's map. The map stays
// the truth: at is set from it, and cleared when its slice is freed.
type keyIDs struct {
	ids  map[string]int32
	keys []string // by id; "" for a free id
	refs []int32  // by id: the slices holding the key
	at   []kidAt  // by id
	free []int32
}

// kidAt is a slice holding a key and the key's slot there; w nil: none.
type kidAt struct {
	w    *slice
	slot int32
}

func newKeyIDs() keyIDs { return keyIDs{ids: map[string]int32{}} }

// of is key's id, given one (with no reference yet) if it has none.
func (k *keyIDs) of(key []byte) int32 {
	if id, ok := k.ids[string(key)]; ok {
		return id
	}
	return k.add(string(key))
}

// ofString is of for a key already a string (restore).
func (k *keyIDs) ofString(key string) int32 {
	if id, ok := k.ids[key]; ok {
		return id
	}
	return k.add(key)
}

func (k *keyIDs) add(key string) int32 {
	var id int32
	if n := len(k.free); n > 0 {
		id, k.free = k.free[n-1], k.free[:n-1]
		k.keys[id], k.refs[id], k.at[id] = key, 0, kidAt{}
	} else {
		id = int32(len(k.keys))
		k.keys = append(k.keys, key)
		k.refs = append(k.refs, 0)
		k.at = append(k.at, kidAt{})
	}
	k.ids[key] = id
	return id
}

// unref drops a slice's reference to id, freeing it with the last one.
// It reports whether id was freed.
func (k *keyIDs) unref(id int32) bool {
	if k.refs[id]--; k.refs[id] > 0 {
		return false
	}
	delete(k.ids, k.keys[id])
	k.keys[id], k.at[id] = "", kidAt{}
	k.free = append(k.free, id)
	return true
}

// len is the number of ids in use.
func (k *keyIDs) len() int { return len(k.ids) }
