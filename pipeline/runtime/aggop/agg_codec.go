package aggop

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"unsafe"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/state"
)

// RowArena carves output rows from shared chunks, so that emitting a row
// costs no allocation of its own. Rows are never reused: receivers may
// keep them.
type RowArena struct{ buf []row.Value }

// RowFrom is a row of width values for the next change emitted: carved
// from c, the output batch's memory, which its reader gives back for
// later batches (operator.RowCarver), when c is not nil; else from the
// arena, new memory the GC collects. Carved, millions of emitted rows
// cost no allocation and no zeroing.
func (a *RowArena) RowFrom(c operator.RowCarver, width int) row.Row {
	if c != nil {
		return c.CarveRow(width)
	}
	return a.Row(width)
}

func (a *RowArena) Row(width int) row.Row {
	if len(a.buf)+width > cap(a.buf) {
		a.buf = make([]row.Value, 0, max(256*width, 1))
	}
	n := len(a.buf)
	a.buf = a.buf[:n+width]
	return a.buf[n : n+width : n+width]
}

// DecodeKeyView is DecodeKey of a view of a key table's bytes, valid
// only until the table changes, with no copy of the key (an allocation
// per emitted key): of the values decoded only a STRING points into what
// it was decoded from, and that one is copied.
func DecodeKeyView(dst []row.Value, key []byte) error {
	if err := DecodeKey(dst, unsafe.String(unsafe.SliceData(key), len(key))); err != nil {
		return err
	}
	for i, v := range dst {
		if v.Type() == row.String {
			dst[i] = row.StringValue(strings.Clone(v.Str()))
		}
	}
	return nil
}

// DecodeKey reads the values row.KeyOf encoded into key, filling dst. It
// is row.AppendKey's inverse (a test holds the two together); strings of
// the result share key's memory.
func DecodeKey(dst []row.Value, key string) error {
	for i := range dst {
		if len(key) < 2 {
			return fmt.Errorf("group key truncated at column %d", i)
		}
		id, scale := row.TypeID(key[0]), int(key[1])
		key = key[2:]
		if id == row.Decimal && scale&0x80 != 0 {
			// A wide DECIMAL: low and high word, little-endian.
			if len(key) < 16 {
				return fmt.Errorf("group key column %d truncated", i)
			}
			lo := binary.LittleEndian.Uint64([]byte(key[:8]))
			hi := binary.LittleEndian.Uint64([]byte(key[8:16]))
			key = key[16:]
			dst[i] = row.Decimal128Value(row.Int128{Hi: int64(hi), Lo: lo}, scale&^0x80)
			continue
		}
		switch id {
		case row.Null:
			dst[i] = row.NullValue
			continue
		case row.String, row.Bytes:
			n, w := uvarint(key)
			if w <= 0 || n > uint64(len(key)-w) {
				return fmt.Errorf("group key column %d: bad string length", i)
			}
			s := key[w : w+int(n)]
			key = key[w+int(n):]
			if id == row.String {
				dst[i] = row.StringValue(s)
			} else {
				dst[i] = row.BytesValue([]byte(s))
			}
			continue
		case row.Array, row.Map, row.Struct:
			n, w := uvarint(key)
			if w <= 0 || n > uint64(len(key)-w) {
				return fmt.Errorf("group key column %d: bad nested value length", i)
			}
			v, err := row.NestedValue(id, key[w:w+int(n)])
			if err != nil {
				return fmt.Errorf("group key column %d: %w", i, err)
			}
			dst[i] = v
			key = key[w+int(n):]
			continue
		}
		if len(key) < 8 {
			return fmt.Errorf("group key column %d truncated", i)
		}
		var n uint64
		for j := 7; j >= 0; j-- {
			n = n<<8 | uint64(key[j])
		}
		key = key[8:]
		switch id {
		case row.Boolean:
			dst[i] = row.BoolValue(n != 0)
		case row.Int:
			dst[i] = row.IntValue(int32(int64(n)))
		case row.BigInt:
			dst[i] = row.BigIntValue(int64(n))
		case row.Float:
			dst[i] = row.FloatValue(float32(math.Float64frombits(n)))
		case row.Double:
			dst[i] = row.DoubleValue(math.Float64frombits(n))
		case row.Decimal:
			dst[i] = row.DecimalValue(int64(n), scale)
		case row.Date:
			dst[i] = row.DateValue(int32(int64(n)))
		case row.Timestamp:
			dst[i] = row.TimestampValue(int64(n))
		case row.TimestampLTZ:
			dst[i] = row.TimestampLTZValue(int64(n))
		default:
			return fmt.Errorf("group key column %d: unknown type %d", i, id)
		}
	}
	if len(key) != 0 {
		return fmt.Errorf("group key has %d bytes after its %d columns", len(key), len(dst))
	}
	return nil
}

// uvarint is binary.Uvarint over a string: the number and the bytes it
// took, or w <= 0 when s does not start with a valid one.
func uvarint(s string) (n uint64, w int) {
	for i := 0; i < len(s) && i < 10; i++ {
		b := s[i]
		if b < 0x80 {
			if i == 9 && b > 1 {
				return 0, -1
			}
			return n | uint64(b)<<(7*i), i + 1
		}
		n |= uint64(b&0x7f) << (7 * i)
	}
	return 0, 0
}

// Snapshot encoding of a Store: the slot count, the free list, then
// every slot in id order (free ones are zeroed and cost a few bytes): its
// key, its int64 slots (varints), its Value slots and its maps (a tag, 0
// for none, then value/count pairs). Slot ids survive a restore, so the
// order groups were first seen, which batch mode and windows emit in,
// does too.
const (
	extNone     = 0
	extCounts   = 1 // valueCounts of a DISTINCT aggregate (its view of a shared set, distinct_set.go)
	extExtremes = 2 // extremes of a retractable MIN/MAX
	extList     = 3 // valueList of LISTAGG and retractable FIRST/LAST_VALUE
	extUser     = 4 // the accumulator bytes of a user aggregate
	extArray    = 5 // arrayAcc of ARRAY_AGG: its values, then its retractions
	extObject   = 6 // objectAcc of JSON_OBJECTAGG: members, then retractions, each key, key text, value
)

// AppendState appends the store's state; key gives a slot's group key
// (a view, copied at once) when the store does not keep keys itself.
func (s *Store) AppendState(dst []byte, key func(id int32) []byte) []byte {
	dst, _ = s.appendState(dst, key, nil)
	return dst
}

// appendState is AppendState; with flush, it hands dst to flush whenever
// it holds stateFlushBytes, and goes on with what flush returns, so that
// the state is never held whole (WriteState).
func (s *Store) appendState(dst []byte, key func(id int32) []byte, flush func([]byte) ([]byte, error)) ([]byte, error) {
	s.settle()
	if s.hasUser() {
		// The accumulators with every change applied; the results are
		// computed again after a restore.
		if s.flushUser(); s.userErr != nil {
			return dst, s.userErr
		}
	}
	dst = binary.AppendUvarint(dst, uint64(s.Slots))
	dst = binary.AppendUvarint(dst, uint64(len(s.Free)))
	for _, id := range s.Free {
		dst = binary.AppendUvarint(dst, uint64(id))
	}
	start := len(dst)
	for id := range s.Slots {
		if flush != nil && len(dst) >= stateFlushBytes {
			var err error
			if dst, err = flush(dst); err != nil {
				return dst, err
			}
		} else if flush == nil && id == snapshotSample && s.Slots >= 4*snapshotSample {
			dst = growForRest(dst, len(dst)-start, snapshotSample, int(s.Slots))
		}
		dst = s.appendSlot(dst, id, key)
	}
	return dst, nil
}

// appendSlot appends slot id's key and accumulators (the user
// aggregates' flushed already).
func (s *Store) appendSlot(dst []byte, id int32, key func(id int32) []byte) []byte {
	if s.keepKeys {
		dst = row.AppendString(dst, s.Keys[id])
	} else if key != nil {
		k := key(id)
		dst = binary.AppendUvarint(dst, uint64(len(k))) // row.AppendString's layout
		dst = append(dst, k...)
	} else {
		dst = row.AppendString(dst, "")
	}
	nums := s.nums[int(id)*s.numW : int(id+1)*s.numW]
	for _, n := range nums[:s.numSnap] {
		dst = binary.AppendVarint(dst, n)
	}
	if s.valSnap > 0 {
		for i := range s.Aggs {
			// The Values in sval order, which is aggregate order.
			switch a := &s.Aggs[i]; {
			case a.kind == accWord:
				dst = row.AppendValue(dst, s.wordValue(id, a, nums))
			case a.val >= 0:
				dst = row.AppendValue(dst, s.vals[int(id)*s.valW+a.val])
			}
		}
	}
	for j, x := range s.exts[int(id)*s.extW : int(id+1)*s.extW] {
		if v := s.setViews[j]; v.set >= 0 {
			// A DISTINCT aggregate's map, as it was before the sets.
			dst = s.appendSetView(dst, id, &s.sets[v.set], v.member)
			continue
		}
		switch m := x.(type) {
		case *userAcc:
			dst = append(dst, extUser)
			dst = binary.AppendUvarint(dst, uint64(len(m.acc)))
			dst = append(dst, m.acc...)
		case valueCounts:
			dst = append(dst, extCounts)
			dst = binary.AppendUvarint(dst, uint64(len(m)))
			for v, c := range m {
				dst = row.AppendValue(dst, v)
				dst = binary.AppendVarint(dst, c)
			}
		case *arrayAcc:
			dst = append(dst, extArray)
			for _, l := range [2][]row.Value{m.vals, m.retract} {
				dst = binary.AppendUvarint(dst, uint64(len(l)))
				for _, v := range l {
					dst = row.AppendValue(dst, v)
				}
			}
		case *objectAcc:
			dst = append(dst, extObject)
			for _, om := range [2]map[string]objectEntry{m.m, m.retract} {
				dst = binary.AppendUvarint(dst, uint64(len(om)))
				for k, e := range om {
					dst = row.AppendString(dst, k)
					dst = row.AppendString(dst, e.quoted)
					dst = row.AppendValue(dst, e.val)
				}
			}
		case *valueList:
			dst = append(dst, extList)
			dst = binary.AppendUvarint(dst, uint64(len(m.vals)))
			for _, v := range m.vals {
				dst = row.AppendValue(dst, v)
			}
		case *extremes:
			dst = append(dst, extExtremes)
			live := 0
			for _, c := range m.counts {
				if c.n != 0 {
					live++
				}
			}
			dst = binary.AppendUvarint(dst, uint64(live))
			for v, c := range m.counts {
				if c.n != 0 {
					dst = row.AppendValue(dst, v)
					dst = binary.AppendVarint(dst, c.n)
				}
			}
		default:
			dst = append(dst, extNone)
		}
	}
	return dst
}

// snapshotSample is how many slots AppendState encodes before it sizes
// the buffer for the rest.
const snapshotSample = 1024

// growForRest makes room in dst for all slots at the bytes per slot that
// the first done took, and an eighth more: a million groups then cost one
// buffer of about the snapshot's size, instead of append's successive
// copies of it (twice the snapshot's size at the peak, and garbage for
// the GC), which at the end of a run made the checkpoint the peak of the
// process's memory.
func growForRest(dst []byte, bytes, done, all int) []byte {
	rest := bytes / done * (all - done)
	return slices.Grow(dst, rest+rest/8)
}

// RestoreState replaces the store's groups with those AppendState wrote,
// handing each slot's key to each (if not nil) as it is read: key is
// valid during the call only, so that a restore of millions of groups
// holds no second copy of their keys. Free slots have an empty key.
func (s *Store) RestoreState(d *row.Decoder, each func(id int32, key []byte)) {
	// The state is replaced: updates logged for the one before it go.
	s.dropLogs()
	// What each map slot holds, from the layout: DISTINCT counts or a
	// MIN/MAX multiset.
	extTag := make([]byte, s.extW)
	extMax := make([]bool, s.extW)
	for _, a := range s.Aggs {
		if a.ext >= 0 {
			extTag[a.ext], extMax[a.ext] = extExtremes, a.max
			switch a.kind {
			case accList:
				extTag[a.ext] = extList
			case accBag:
				extTag[a.ext] = extCounts
			case accUser:
				extTag[a.ext] = extUser
			case accArray:
				extTag[a.ext] = extArray
			case accObject:
				extTag[a.ext] = extObject
			}
		}
		if a.dist >= 0 {
			extTag[a.dist] = extCounts
		}
	}
	// By column, the decoder retags the values of an aggregate whose
	// argument widened, and no other (byArg), and the keys by position.
	byCol := s.widenIn != nil
	var argWiden []map[row.TypeID]row.TypeID // per aggregate
	extAgg := make([]int, s.extW)
	if byCol {
		argWiden = make([]map[row.TypeID]row.TypeID, len(s.Aggs))
		for i, a := range s.Aggs {
			if a.ext >= 0 {
				extAgg[a.ext] = i
			}
			if a.dist >= 0 {
				extAgg[a.dist] = i
			}
			if arg := a.call.Arg; arg >= 0 && arg < len(s.widenIn) {
				switch s.widenIn[arg] {
				case row.BigInt:
					argWiden[i] = map[row.TypeID]row.TypeID{row.Int: row.BigInt}
				case row.Double:
					argWiden[i] = map[row.TypeID]row.TypeID{row.Float: row.Double}
				}
			}
		}
		defer d.SetWiden(nil)
	}
	byArg := func(i int) { d.SetWiden(argWiden[i]) }
	slots := d.Count(1 + s.numSnap + s.valSnap + s.extW)
	free := make([]int32, d.Count(1))
	for i := range free {
		id := d.Uvarint()
		if id >= uint64(slots) {
			d.Fail("free slot %d of %d", id, slots)
		}
		free[i] = int32(id)
	}
	s.Slots = int32(slots)
	s.Free = free
	s.mem.Release()
	s.nums = state.OffHeapMake[int64](s.mem, slots*s.numW)
	s.present = nil
	s.growPresent(slots)
	s.vals = make([]row.Value, slots*s.valW)
	s.exts = make([]any, slots*s.extW)
	s.strs = make([]strSet, slots*s.nstr)
	s.Keys = nil
	if s.keepKeys {
		s.Keys = make([]string, slots)
	}
	for id := 0; id < slots && d.Err() == nil; id++ {
		var key []byte
		if byCol {
			d.SetWiden(nil)
			key = d.WidenKeyCols(d.BytesView(), s.widenKey)
		} else {
			key = d.WidenKey(d.BytesView())
		}
		if s.keepKeys {
			s.Keys[id] = string(key)
		}
		if each != nil && d.Err() == nil {
			each(int32(id), key)
		}
		nums := s.nums[id*s.numW : (id+1)*s.numW]
		for j := range s.numSnap {
			nums[j] = d.Varint()
		}
		for i := range s.Aggs {
			if byCol {
				byArg(i)
			}
			switch a := &s.Aggs[i]; {
			case a.kind == accWord:
				if v := d.Value(); !v.IsNull() {
					if err := a.checkArg(v); err != nil {
						d.Fail("slot %d: %v", id, err)
						break
					}
					s.setWord(int32(id), a, nums, wordOf(a.call.ArgType.ID, v))
				}
			case a.val >= 0:
				s.vals[id*s.valW+a.val] = d.Value()
			}
		}
		for j := range s.extW {
			if byCol {
				byArg(extAgg[j])
			}
			tag := d.Byte()
			if tag == extNone {
				continue
			}
			if tag != extTag[j] {
				d.Fail("slot %d map %d: tag %d, want %d", id, j, tag, extTag[j])
				break
			}
			if tag == extUser {
				b := d.Bytes()
				s.exts[id*s.extW+j] = &userAcc{acc: append([]byte(nil), b...)}
				continue
			}
			if tag == extArray {
				acc := &arrayAcc{}
				for _, l := range [2]*[]row.Value{&acc.vals, &acc.retract} {
					*l = make([]row.Value, d.Count(1))
					for k := range *l {
						(*l)[k] = d.Value()
					}
				}
				s.exts[id*s.extW+j] = acc
				continue
			}
			if tag == extObject {
				acc := &objectAcc{}
				for _, om := range [2]*map[string]objectEntry{&acc.m, &acc.retract} {
					n := d.Count(3)
					*om = make(map[string]objectEntry, n)
					for range n {
						k := strings.Clone(d.Str())
						q := strings.Clone(d.Str())
						(*om)[k] = objectEntry{quoted: q, val: d.Value()}
					}
				}
				s.exts[id*s.extW+j] = acc
				continue
			}
			if tag == extList {
				l := &valueList{vals: make([]row.Value, d.Count(1))}
				for k := range l.vals {
					l.vals[k] = d.Value()
				}
				s.exts[id*s.extW+j] = l
				continue
			}
			if v := s.setViews[j]; v.set >= 0 {
				s.restoreSetView(d, id, &s.sets[v.set], v.member)
				continue
			}
			n := d.Count(2)
			if tag == extCounts {
				m := make(valueCounts, n)
				for range n {
					v := d.Value()
					m[v] = d.Varint()
				}
				s.exts[id*s.extW+j] = m
				continue
			}
			e := newExtremes(extMax[j], n)
			for range n {
				v := d.Value()
				e.add(v, d.Varint())
			}
			s.exts[id*s.extW+j] = e
		}
	}
}

// AppendClock starts the snapshot of an event-time operator (window,
// session and OVER aggregates): its state version, the watermark, the time
// attribute's type and the count of late rows dropped.
func AppendClock(version byte, wm int64, timeID row.TypeID, dropped int64) []byte {
	buf := []byte{version}
	buf = binary.AppendVarint(buf, wm)
	buf = append(buf, byte(timeID))
	return binary.AppendVarint(buf, dropped)
}

// ReadClock reads what AppendClock wrote; what names the operator in the
// error of a snapshot of another version.
func ReadClock(d *row.Decoder, version byte, what string) (wm int64, timeID row.TypeID, dropped int64, err error) {
	if v := d.Byte(); v != version {
		return 0, 0, 0, fmt.Errorf("%s: state version %d, want %d", what, v, version)
	}
	wm = d.Varint()
	timeID = row.TypeID(d.Byte())
	if timeID != row.Null && timeID != row.Timestamp && timeID != row.TimestampLTZ {
		d.Fail("time attribute type %d", timeID)
	}
	return wm, timeID, d.Varint(), nil
}

// AppendSlots appends the slots ids as AppendState writes each slot
// (the user aggregates' changes applied first; key as AppendState's),
// so that an operator whose groups are not one per key (windows) writes
// a key group's slots alone; AppendStoreHead then heads the slots of
// several such runs as one store's state, with no free slots, for
// RestoreState.
func (s *Store) AppendSlots(dst []byte, ids []int32, key func(id int32) []byte) ([]byte, error) {
	s.settle()
	if s.hasUser() {
		if s.flushUser(); s.userErr != nil {
			return dst, s.userErr
		}
	}
	for _, id := range ids {
		dst = s.appendSlot(dst, id, key)
	}
	return dst, nil
}

// AppendStoreHead appends the head of a store's state of slots slots
// and no free ones, which the slots' bytes (AppendSlots) follow.
func AppendStoreHead(dst []byte, slots int) []byte {
	dst = binary.AppendUvarint(dst, uint64(slots))
	return binary.AppendUvarint(dst, 0)
}
