package runtime

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
