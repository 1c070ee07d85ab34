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
// By id, at is the slice (by seq) where the key's last row went and its
// slot there: a row of a key in the slice of its key's row before it
// (rows in time order: 4 rows in 5 of M-hopkey, a new slice every 5,000
// rows of 1,000 keys) finds its slot without the slice's map. The map
// stays the truth: at is set from it, and cleared when its slice is
// freed.
type keyIDs struct {
	t    *state.KeyIDs
	strs []string // by id: the key as a string; "" for a free id
	refs []int32  // by id: the slices holding the key
	at   []kidAt  // by id
}

// kidAt is a slice holding a key (its seq) and the key's slot there;
// seq 0: none.
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
