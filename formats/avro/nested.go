package avro

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/hamba/avro/v2"

	"github.com/etld/etld/pipeline/row"
)

// Nested values (ARRAY, MAP, ROW) are kept by etld as one string: the
// count of their items, then each item as row.AppendValue writes it.
// Building a []row.Value of the items and encoding it costs three
// allocations per value (the items, the encoding, its string), and more
// for a nested value inside another; a datum's nested values are
// therefore appended straight in that form, items of items included,
// into the reader's scratch buffer, and a column's value is a string of
// the reader's arena (reader.keep), many values to one allocation.

// appendFn reads one value of a writer type and appends it to dst as
// row.AppendValue writes the value of the column type.
type appendFn func(r *reader, dst []byte) ([]byte, error)

// fillFn appends the items of a nested value and returns their count.
type fillFn func(r *reader, dst []byte) ([]byte, int, error)

// appendNested appends the nested value of type id whose items fill
// appends, in row.AppendValue's form: its type, the length of its
// encoding, the count of its items, the items. The head is known only
// once the items are: room is left for the head of a value of fewer than
// 128 items in fewer than 128 bytes, and the items moved when it is
// longer.
func appendNested(r *reader, dst []byte, id row.TypeID, fill fillFn) ([]byte, error) {
	start := len(dst)
	dst = append(dst, byte(id), 0, 0)
	body := len(dst)
	dst, n, err := fill(r, dst)
	if err != nil {
		return dst[:start], err
	}
	items := len(dst) - body
	if n < 0x80 && items+1 < 0x80 {
		dst[start+1], dst[start+2] = byte(items+1), byte(n)
		return dst, nil
	}
	var head [1 + 2*binary.MaxVarintLen64]byte
	c := binary.PutUvarint(head[:], uint64(n))
	h := append(head[c:c], byte(id))
	h = binary.AppendUvarint(h, uint64(c+items))
	h = append(h, head[:c]...)
	if grow := len(h) - (body - start); grow > 0 {
		dst = append(dst, head[:grow]...)
	}
	copy(dst[start+len(h):], dst[body:body+items])
	copy(dst[start:], h)
	return dst[:start+len(h)+items], nil
}

// nestedValue reads a nested value of type id whose items fill appends,
// as a column's value: the items are built in r's scratch buffer, and
// the value's string is kept in r's arena.
func nestedValue(r *reader, id row.TypeID, fill fillFn) (row.Value, error) {
	start := len(r.scratch)
	dst, n, err := fill(r, r.scratch)
	r.scratch = dst[:start]
	if err != nil {
		return row.NullValue, err
	}
	items := dst[start:]
	var count [binary.MaxVarintLen64]byte
	c := binary.PutUvarint(count[:], uint64(n))
	return row.NestedValue(id, r.keep(count[:c], items))
}

// compileAppend returns the appender of the writer type w as values of t.
func compileAppend(w avro.Schema, t row.Type) (appendFn, error) {
	w = deref(w)
	switch {
	case w.Type() == avro.Union:
		return compileUnionAppend(w.(*avro.UnionSchema), t)
	case w.Type() == avro.Array && t.ID == row.Array:
		fill, err := compileArrayFill(w.(*avro.ArraySchema), t)
		if err != nil {
			return nil, err
		}
		return func(r *reader, dst []byte) ([]byte, error) { return appendNested(r, dst, row.Array, fill) }, nil
	case w.Type() == avro.Record && t.ID == row.Struct:
		fill, err := compileRecordFill(w, t)
		if err != nil {
			return nil, err
		}
		return func(r *reader, dst []byte) ([]byte, error) { return appendNested(r, dst, row.Struct, fill) }, nil
	case w.Type() == avro.Map && t.ID == row.Map && t.Key().ID == row.String:
		fill, err := compileMapFill(w.(*avro.MapSchema), t)
		if err != nil {
			return nil, err
		}
		return func(r *reader, dst []byte) ([]byte, error) { return appendNested(r, dst, row.Map, fill) }, nil
	}
	if app := scalarAppend(w, t); app != nil {
		return app, nil
	}
	dec, err := compileValue(w, t)
	if err != nil {
		return nil, err
	}
	return func(r *reader, dst []byte) ([]byte, error) {
		v, err := dec(r)
		if err != nil {
			return dst, err
		}
		return row.AppendValue(dst, v), nil
	}, nil
}

func compileUnionAppend(u *avro.UnionSchema, t row.Type) (appendFn, error) {
	types := u.Types()
	apps := make([]appendFn, len(types))
	var last error
	readable := 0
	for i, b := range types {
		app, err := compileAppend(b, t)
		if err != nil {
			msg := fmt.Sprintf("union branch %d: %v", i, err)
			app = func(r *reader, dst []byte) ([]byte, error) { return dst, r.fail("%s", msg) }
			last = err
		} else if b.Type() != avro.Null {
			readable++
		}
		apps[i] = app
	}
	if readable == 0 && last != nil {
		return nil, fmt.Errorf("no branch of the writer's union %s can be read as %s: %w", u, t, last)
	}
	return func(r *reader, dst []byte) ([]byte, error) {
		start := r.pos
		i, err := r.long()
		if err != nil {
			return dst, err
		}
		if i < 0 || i >= int64(len(apps)) {
			r.pos = start
			return dst, r.fail("union branch %d of %d", i, len(apps))
		}
		return apps[i](r, dst)
	}, nil
}

func compileArrayFill(a *avro.ArraySchema, t row.Type) (fillFn, error) {
	elem, err := compileAppend(a.Items(), t.Elem())
	if err != nil {
		return nil, fmt.Errorf("array items: %w", err)
	}
	return func(r *reader, dst []byte) ([]byte, int, error) {
		total := 0
		for {
			n, err := r.blockCount()
			if err != nil || n == 0 {
				return dst, total, err
			}
			for range n {
				if dst, err = elem(r, dst); err != nil {
					return dst, 0, err
				}
			}
			total += n
		}
	}, nil
}

// compileMapFill appends a map's entries as they come. A map's keys are
// distinct as Avro writers write them; one given twice keeps its first
// place and its last value (row.MapValue), so a map with one is read
// again, from its start, through row.MapValue.
func compileMapFill(m *avro.MapSchema, t row.Type) (fillFn, error) {
	val, err := compileAppend(m.Values(), t.Elem())
	if err != nil {
		return nil, fmt.Errorf("map values: %w", err)
	}
	// Compiled when first needed: compiling it with val would double
	// the work at each level of maps inside maps.
	slow := sync.OnceValues(func() (valueDec, error) { return compileMap(m, t) })
	return func(r *reader, dst []byte) ([]byte, int, error) {
		from, start := r.pos, len(dst)
		// The keys seen go on r.keys after those of the maps this one is
		// inside of.
		base := len(r.keys)
		defer func() { r.keys = r.keys[:base] }()
		total := 0
		for {
			n, err := r.blockCount()
			if err != nil {
				return dst, 0, err
			}
			if n == 0 {
				break
			}
			for range n {
				k, err := r.bytes()
				if err != nil {
					return dst, 0, err
				}
				for _, seen := range r.keys[base:] {
					if seen == k {
						r.keys = r.keys[:base]
						return mapAgain(r, dst[:start], from, slow)
					}
				}
				r.keys = append(r.keys, k)
				dst = row.AppendValue(dst, row.StringValue(k))
				if dst, err = val(r, dst); err != nil {
					return dst, 0, err
				}
			}
			total += n
		}
		return dst, total, nil
	}, nil
}

// mapAgain reads a map with a key given twice from its start, through
// row.MapValue, and appends its entries.
func mapAgain(r *reader, dst []byte, from int, compiled func() (valueDec, error)) ([]byte, int, error) {
	slow, err := compiled()
	if err != nil {
		return dst, 0, err
	}
	r.pos = from
	r.scratch = dst
	v, err := slow(r)
	dst = r.scratch
	if err != nil {
		return dst, 0, err
	}
	for _, x := range v.Items() {
		dst = row.AppendValue(dst, x)
	}
	return dst, v.Len(), nil
}

// compileRecordFill appends a record's fields as the ROW's. When the
// writer's fields come in the ROW's order (the fields it lacks at the
// end, or none), each is appended as it is read; otherwise they are read
// into a row first and appended in the ROW's order.
func compileRecordFill(w avro.Schema, t row.Type) (fillFn, error) {
	fields := t.Fields()
	rd, err := resolveRecord(w, fields, nil, true)
	if err != nil {
		return nil, err
	}
	next := 0
	inOrder := len(rd.nulls) == 0
	for _, st := range rd.steps {
		if st.to >= 0 {
			inOrder = inOrder && st.to == next
			next++
		}
	}
	if inOrder && next == len(fields) {
		return func(r *reader, dst []byte) ([]byte, int, error) {
			for i := range rd.steps {
				st := &rd.steps[i]
				var err error
				if st.app == nil {
					err = st.skip(r)
				} else {
					dst, err = st.app(r, dst)
				}
				if err != nil {
					return dst, 0, &fieldError{column: st.name, err: err}
				}
			}
			return dst, len(fields), nil
		}, nil
	}
	if rd, err = compileRecord(w, fields, nil); err != nil {
		return nil, err
	}
	return func(r *reader, dst []byte) ([]byte, int, error) {
		vals := make([]row.Value, len(fields))
		r.scratch = dst
		err := rd.decode(r, vals)
		dst = r.scratch
		if err != nil {
			return dst, 0, err
		}
		for _, v := range vals {
			dst = row.AppendValue(dst, v)
		}
		return dst, len(fields), nil
	}, nil
}

// scalarAppend returns a direct appender for the commonest scalars
// (row.AppendValue's form written from the datum's bytes, no row.Value
// between them), or nil for the others.
func scalarAppend(w avro.Schema, t row.Type) appendFn {
	if logical(w) != "" {
		return nil
	}
	switch {
	case w.Type() == avro.String && t.ID == row.String:
		return func(r *reader, dst []byte) ([]byte, error) {
			s, err := r.bytes()
			if err != nil {
				return dst, err
			}
			dst = binary.AppendUvarint(append(dst, byte(row.String)), uint64(len(s)))
			return append(dst, s...), nil
		}
	case w.Type() == avro.Long && t.ID == row.BigInt:
		return func(r *reader, dst []byte) ([]byte, error) {
			n, err := r.long()
			if err != nil {
				return dst, err
			}
			return binary.AppendVarint(append(dst, byte(row.BigInt)), n), nil
		}
	case w.Type() == avro.Int && t.ID == row.Int:
		return func(r *reader, dst []byte) ([]byte, error) {
			n, err := r.int()
			if err != nil {
				return dst, err
			}
			return binary.AppendVarint(append(dst, byte(row.Int)), t.WrapInt(int64(n))), nil
		}
	case w.Type() == avro.Double && t.ID == row.Double:
		return func(r *reader, dst []byte) ([]byte, error) {
			if len(r.s)-r.pos < 8 {
				return dst, r.fail("the record ends inside a double")
			}
			dst = append(append(dst, byte(row.Double)), r.s[r.pos:r.pos+8]...)
			r.pos += 8
			return dst, nil
		}
	}
	return nil
}
