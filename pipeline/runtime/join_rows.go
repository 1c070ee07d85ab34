package runtime

import "unsafe"

// joinRows is one join key's stored rows by identity (joinSide.ident).
// Most keys hold a few rows, and a Go map per key cost an allocation of
// a few hundred bytes and two string hashes per change: here the rows
// are two slices scanned in turn, with an index map built only once a
// key holds more than joinRowsScan rows.
type joinRows struct {
	ids []string
	es  []*joinEntry
	idx map[string]int // position by id, when len > joinRowsScan
}

const joinRowsScan = 16

func (m *joinRows) len() int { return len(m.ids) }

func (m *joinRows) find(id string) int {
	if m.idx != nil {
		if i, ok := m.idx[id]; ok {
			return i
		}
		return -1
	}
	for i, x := range m.ids {
		if x == id {
			return i
		}
	}
	return -1
}

// get returns id's entry, nil if none.
func (m *joinRows) get(id string) *joinEntry {
	if i := m.find(id); i >= 0 {
		return m.es[i]
	}
	return nil
}

// put adds e under id, which must be absent; or any number of times
// under "", for rows that are never looked up by id (an append-only
// side's).
func (m *joinRows) put(id string, e *joinEntry) {
	m.ids = append(m.ids, id)
	m.es = append(m.es, e)
	switch {
	case id == "":
	case m.idx != nil:
		m.idx[id] = len(m.ids) - 1
	case len(m.ids) > joinRowsScan:
		m.idx = make(map[string]int, 2*len(m.ids))
		for i, x := range m.ids {
			m.idx[x] = i
		}
	}
}

// del removes id, moving the last row into its place.
func (m *joinRows) del(id string) {
	i := m.find(id)
	if i < 0 {
		return
	}
	last := len(m.ids) - 1
	m.ids[i], m.es[i] = m.ids[last], m.es[last]
	if m.idx != nil {
		m.idx[m.ids[i]] = i
		delete(m.idx, id)
	}
	m.ids[last], m.es[last] = "", nil
	m.ids, m.es = m.ids[:last], m.es[:last]
}

// all yields the rows in the order they were added (until a deletion
// moves the last row into the deleted one's place). The row being
// yielded may be deleted; no other may.
func (m *joinRows) all(yield func(string, *joinEntry) bool) {
	for i := 0; i < len(m.ids); {
		e := m.es[i]
		if !yield(m.ids[i], e) {
			return
		}
		if i < len(m.ids) && m.es[i] == e {
			i++ // still there; else the last row took its place: visit it
		}
	}
}

// joinKeys is a join side's rows by join key: the keys in a keyTable
// (no string kept per key, no Go map to hash them), each id's rows in
// rows.
type joinKeys struct {
	index *keyIDs
	rows  []*joinRows // by id; nil for a free id
}

func newJoinKeys() *joinKeys { return &joinKeys{index: newKeyIDs()} }

// view is key's bytes, shared: the table only reads them.
func view(key string) []byte { return unsafe.Slice(unsafe.StringData(key), len(key)) }

// get returns key's rows, nil if it has none.
func (t *joinKeys) get(key string) *joinRows {
	if id, ok := t.index.find(view(key)); ok {
		return t.rows[id]
	}
	return nil
}

// add gives key, which must be absent, empty rows.
func (t *joinKeys) add(key string) *joinRows {
	m := &joinRows{}
	if id, fresh := t.index.add(view(key)); fresh {
		t.rows = append(t.rows, m)
	} else {
		t.rows[id] = m
	}
	return m
}

// remove forgets key.
func (t *joinKeys) remove(key string) {
	if id, ok := t.index.drop(view(key)); ok {
		t.rows[id] = nil
	}
}

// all yields each key with its rows. The yielded key's rows may be
// emptied, not removed, while it runs.
func (t *joinKeys) all(yield func(string, *joinRows) bool) {
	for id, m := range t.rows {
		if m != nil && !yield(t.index.key(int32(id)), m) {
			return
		}
	}
}
