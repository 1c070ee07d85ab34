package avro

import (
	"errors"
	"fmt"

	"github.com/hamba/avro/v2"

	"github.com/etld/etld/pipeline/row"
)

// Debezium's change event, as its Avro converter writes it: a record with
// before and after (each null or a record of the row), op (c, r, u, d) and
// fields etld does not read (source, ts_ms, transaction). c and r give
// +I(after), u gives -U(before) and +U(after), d gives -D(before).

// envelopeDec reads events of one writer schema.
type envelopeDec struct {
	steps []envStep // in the writer's field order
}

type envStep struct {
	image *imageDec // before or after
	after bool
	op    valueDec
	skip  skipFn
}

// imageDec reads a row image: a record, or a union of null and a record.
type imageDec struct {
	branches []*recordDec // by union branch; nil for null
	plain    *recordDec   // not a union
}

func compileEnvelope(w avro.Schema, columns []row.Field, at []int) (*envelopeDec, error) {
	rs, ok := deref(w).(*avro.RecordSchema)
	if !ok {
		return nil, fmt.Errorf("a Debezium event's schema is a record; this one is a %s", w.Type())
	}
	d := &envelopeDec{}
	seen := map[string]bool{}
	for _, f := range rs.Fields() {
		st := envStep{}
		switch f.Name() {
		case "before", "after":
			img, err := compileImage(f.Type(), columns, at)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.Name(), err)
			}
			st.image, st.after = img, f.Name() == "after"
		case "op":
			op, err := compileValue(f.Type(), row.Of(row.String))
			if err != nil {
				return nil, fmt.Errorf("op: %w", err)
			}
			st.op = op
		default:
			st.skip = compileSkip(f.Type())
		}
		seen[f.Name()] = true
		d.steps = append(d.steps, st)
	}
	if !seen["before"] || !seen["after"] || !seen["op"] {
		return nil, errors.New("not a Debezium event's schema: it needs the fields before, after and op")
	}
	return d, nil
}

func compileImage(w avro.Schema, columns []row.Field, at []int) (*imageDec, error) {
	w = deref(w)
	u, ok := w.(*avro.UnionSchema)
	if !ok {
		rd, err := compileRecord(w, columns, at)
		return &imageDec{plain: rd}, err
	}
	img := &imageDec{branches: make([]*recordDec, len(u.Types()))}
	for i, b := range u.Types() {
		if b.Type() == avro.Null {
			continue
		}
		rd, err := compileRecord(b, columns, at)
		if err != nil {
			return nil, err
		}
		img.branches[i] = rd
	}
	return img, nil
}

// read reads an image into a new row of b, or returns nil for null.
func (img *imageDec) read(r *reader, b *row.Batch, t *table) (row.Row, error) {
	rd := img.plain
	if rd == nil {
		start := r.pos
		i, err := r.long()
		if err != nil {
			return nil, err
		}
		if i < 0 || i >= int64(len(img.branches)) {
			r.pos = start
			return nil, r.fail("union branch %d of %d", i, len(img.branches))
		}
		if rd = img.branches[i]; rd == nil {
			return nil, nil
		}
	}
	out := b.NewRow()
	if err := rd.decode(r, out); err != nil {
		return nil, err
	}
	t.finish(out)
	return out, nil
}

// decode appends the changes of one event to b; on error it may have
// appended some, which the caller drops.
func (d *envelopeDec) decode(r *reader, b *row.Batch, t *table) error {
	var before, after row.Row
	op, opAt := "", -1
	for _, st := range d.steps {
		switch {
		case st.image != nil:
			img, err := st.image.read(r, b, t)
			if err != nil {
				return err
			}
			if st.after {
				after = img
			} else {
				before = img
			}
		case st.op != nil:
			opAt = r.pos
			v, err := st.op(r)
			if err != nil {
				return err
			}
			op = v.Str()
		default:
			if err := st.skip(r); err != nil {
				return err
			}
		}
	}
	need := func(img row.Row, name string) error {
		if img == nil {
			return fmt.Errorf("op %q needs %q, which is null", op, name)
		}
		return nil
	}
	switch op {
	case "c", "r":
		if err := need(after, "after"); err != nil {
			return err
		}
		b.Append(row.Insert, after)
	case "u":
		if before == nil {
			return errors.New(`update event without "before": the old row is needed to retract it (for PostgreSQL, set the table's REPLICA IDENTITY to FULL)`)
		}
		if err := need(after, "after"); err != nil {
			return err
		}
		b.Append(row.UpdateBefore, before)
		b.Append(row.UpdateAfter, after)
	case "d":
		if err := need(before, "before"); err != nil {
			return err
		}
		b.Append(row.Delete, before)
	default:
		return &errAt{off: opAt, msg: fmt.Sprintf("unknown op %q (want c, r, u or d)", op)}
	}
	return nil
}

// envelopeColumns are the columns of the event Flink's
// debezium-avro-confluent writes: before and after, rows of the table's
// columns, and op.
func envelopeColumns(schema row.Schema) []row.Field {
	img := row.RowOf(schema.Fields...)
	return []row.Field{{Name: "before", Type: img}, {Name: "after", Type: img}, {Name: "op", Type: row.Of(row.String)}}
}

// encodeEnvelope appends the event of one change in the layout of
// envelopeColumns' derived schema (each field a union of null first and
// its type), as Flink writes it: +I and +U as {before: null, after: row,
// op: c}, -U and -D as {before: row, after: null, op: d}.
func encodeEnvelope(rec *recordEnc, dst []byte, k row.Kind, r row.Row) ([]byte, error) {
	const null, value = 0, 2 // union branches 0 and 1, zigzag
	var err error
	if k.IsAdd() {
		dst = append(dst, null, value)
		if dst, err = rec.encode(dst, r); err != nil {
			return dst, err
		}
		return appendString(append(dst, value), "c"), nil
	}
	dst = append(dst, value)
	if dst, err = rec.encode(dst, r); err != nil {
		return dst, err
	}
	return appendString(append(dst, null, value), "d"), nil
}
