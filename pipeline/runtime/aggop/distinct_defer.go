package aggop

import (
	"math/bits"
	"unsafe"

	"github.com/etld/etld/pipeline/row"
)

// Deferred DISTINCT sets, batch mode over inserts only: the sets'
// updates are logged (a value and its slot, 16 bytes, appended in
// order) and applied later, many at once, slot range by slot range.
//
// Row by row, each update of a set misses the cache: a group's set is
// a few KiB and its value lands anywhere in it, and 100k groups' sets
// are far larger than the caches (COUNT(DISTINCT name) GROUP BY k1 at
// 100 names a key: a miss a row, most of the operator's time). Nothing
// reads a set before Finish in batch mode, so the updates can wait: a
// flush sorts the log by slot range (a stable counting sort, so each
// group's values keep their order and the sets, the inner aggregates'
// state and every result equal the row-by-row fold's) into ranges whose
// sets fit in a core's cache, and applies each range's updates in a
// row: a set built or grown within its range is written while it is in
// the cache, and a set from an earlier flush is read once per flush
// rather than once per value.
//
// Anything that reads the state applies the log first (settle): the
// results, a snapshot, a release, a merge, a row-by-row update. A set
// of a type other than the word types, STRING and BYTES (a Go map of
// Values), or of more than 32 members is never deferred.

// pendEntry is a logged update: set value w (the word of a word set,
// or a string set's ref: packStr's word, or where its bytes are in the
// log's data, offset << 32 | length) for the members of mask of slot
// id.
type pendEntry struct {
	w    uint64
	id   int32
	mask uint32
}

// setLog is a deferred set's updates not applied yet.
type setLog struct {
	e    []pendEntry
	data []byte // the long strings' bytes
}

const (
	// minSetLog is the fewest updates the log holds before a flush;
	// after one it holds as many as the sets have entries (up to
	// maxSetLog), so that its memory stays within the sets' and a flush
	// comes after the state has doubled.
	minSetLog = 1 << 20
	maxSetLog = 1 << 23
	// flushRangeBytes is the memory of the sets of a slot range a flush
	// applies in one go: within a core's cache.
	flushRangeBytes = 1 << 20
	// deferMembers: a log entry's mask has 32 bits.
	deferMembers = 32
)

// DeferSets has the store log the updates of its word and string
// DISTINCT sets until a read of its state (batch mode over inserts
// only: foldInserts logs them).
func (s *Store) DeferSets() {
	if !s.insertOnly {
		return
	}
	for gi := range s.sets {
		g := &s.sets[gi]
		if (g.word || g.str) && len(g.members) <= deferMembers {
			g.deferred = true
			s.deferring = true
		}
	}
	if s.deferring {
		s.logs = make([]setLog, len(s.sets))
		s.logMin, s.logCap = minSetLog, minSetLog
	}
}

// logSets logs changes[j].Row's updates of the deferred sets of slot
// ids[j], and flushes the log when it is full.
func (s *Store) logSets(ids []int32, changes []row.Change) {
	for gi := range s.sets {
		g := &s.sets[gi]
		if !g.deferred {
			continue
		}
		l := &s.logs[gi]
		before := len(l.e)
		filtered := false
		for _, ai := range g.members {
			filtered = filtered || s.Aggs[ai].call.HasFilter
		}
		all := uint32(1)<<len(g.members) - 1
		for j, id := range ids {
			r := changes[j].Row
			v := r[g.arg]
			if v.IsNull() {
				continue
			}
			mask := all
			if filtered {
				if mask = uint32(s.filterMask(g, r)); mask == 0 {
					continue
				}
			}
			var w uint64
			if g.str {
				str := v.Str()
				if len(str) <= inlineMax {
					w = packStr(str)
				} else {
					w = uint64(len(l.data))<<32 | uint64(len(str))
					l.data = append(l.data, str...)
				}
			} else {
				w = uint64(wordOf(g.typ.ID, v))
			}
			l.e = append(l.e, pendEntry{w: w, id: id, mask: mask})
		}
		s.pending += len(l.e) - before
		if len(l.data) > 1<<30 {
			// The refs' offsets stay well within their 32 bits.
			s.pending = s.logCap
		}
	}
	if s.pending >= s.logCap {
		s.settle()
	}
}

// settle applies the logged updates of the deferred sets, if any: a
// check every read of the state makes.
func (s *Store) settle() {
	if s.pending != 0 {
		s.flushLogs()
	}
}

func (s *Store) flushLogs() {
	live := 0
	for gi := range s.sets {
		if s.sets[gi].deferred {
			live += s.flushLog(gi)
		}
	}
	s.pending = 0
	s.setEntries += live
	s.logCap = min(max(s.logMin, s.setEntries), maxSetLog)
}

// flushLog applies set gi's log and returns how many entries its sets
// gained.
func (s *Store) flushLog(gi int) int {
	g := &s.sets[gi]
	l := &s.logs[gi]
	n := len(l.e)
	if n == 0 {
		return 0
	}
	// Slot ranges of 1 << shift slots whose sets, at about 48 bytes an
	// entry (a 24-byte entry in a table at most 3/4 full, and its
	// growth), hold flushRangeBytes at most.
	slots := int(s.Slots)
	per := slots * flushRangeBytes / max(1, (s.setEntries+n)*48)
	shift := bits.Len(uint(max(per, 1))) - 1
	e := l.e
	if nr := (slots-1)>>shift + 1; nr > 1 {
		// A stable counting sort by range.
		start := make([]int, nr+1)
		for _, p := range e {
			start[int(p.id)>>shift+1]++
		}
		for i := 1; i <= nr; i++ {
			start[i] += start[i-1]
		}
		s.logSorted = growTo(s.logSorted, n)
		for _, p := range e {
			r := int(p.id) >> shift
			s.logSorted[start[r]] = p
			start[r]++
		}
		e = s.logSorted
	}
	gained := 0
	k := len(g.members)
	var buf [8]byte
	for _, p := range e {
		nums := s.nums[int(p.id)*s.numW : int(p.id+1)*s.numW]
		var changed, now uint64
		var v row.Value
		if g.str {
			t := s.strSet(p.id, g)
			if t.e == nil {
				t.init(true, k)
			}
			var str string
			if p.w&inlineBit != 0 {
				*(*uint64)(unsafe.Pointer(&buf)) = p.w // little-endian: the bytes first
				str = unsafe.String(&buf[0], int(p.w>>56&7))
			} else {
				off := int(p.w >> 32)
				str = unsafe.String(&l.data[off], int(uint32(p.w)))
			}
			had := t.n
			changed, now = t.step(str, strHash(str), uint64(p.mask), 1, k)
			gained += int(t.n - had)
			if changed != 0 && g.valued {
				// A copy of its own: str is a view of buf or the log.
				v = strValue(g.typ.ID, string(str))
			}
		} else {
			pp := &s.exts[int(p.id)*s.extW+g.ext]
			t, _ := (*pp).(*wordSet)
			if t == nil {
				t = newWordSet(true, k)
				*pp = t
			}
			had := t.n
			changed, now = t.step(int64(p.w), uint64(p.mask), 1, k)
			gained += t.n - had
			if changed != 0 && g.valued {
				v = valueOfWord(g.typ, int64(p.w))
			}
		}
		for ; changed != 0; changed &= changed - 1 {
			j := bits.TrailingZeros64(changed)
			s.apply(p.id, &s.Aggs[g.members[j]], nums, v, now>>j&1 != 0)
		}
	}
	if cap(l.e) > 2*minSetLog && n < cap(l.e)/4 {
		l.e = nil // a log that was large once need not stay large
	} else {
		l.e = l.e[:0]
	}
	l.data = l.data[:0]
	if n < len(s.logSorted)/4 {
		s.logSorted = nil
	}
	return gained
}

// anyDirect reports whether a set is not deferred.
func (s *Store) anyDirect() bool {
	for gi := range s.sets {
		if !s.sets[gi].deferred {
			return true
		}
	}
	return false
}

// dropLogs forgets the logged updates (a restore replaces the state).
func (s *Store) dropLogs() {
	for i := range s.logs {
		s.logs[i] = setLog{}
	}
	s.pending, s.setEntries, s.logSorted = 0, 0, nil
	s.logCap = s.logMin
}
