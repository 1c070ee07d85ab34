package formattest

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// The kit for bulk formats (connector.BulkEncoder and BulkDecoder), which
// write and read whole files.

// Bulk is a bulk format with one set of options over one schema.
type Bulk struct {
	Schema  row.Schema
	Encoder connector.BulkEncoder
	// Decoders makes a decoder of the same options, for each read.
	Decoder func() connector.BulkDecoder
}

// WriteFile writes rows as one file, a checkpoint and a resume from it
// after every cut rows (none when cut is 0), as a sink resumes a file
// after a crash: the writer is resumed from the bytes it had written and
// given the rows it held again.
func WriteFile(t testing.TB, enc connector.BulkEncoder, rows []row.Row, cut int) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := enc.Create(&out)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	for i, r := range rows {
		if err := w.Write(r); err != nil {
			t.Fatalf("write row %d: %v", i+1, err)
		}
		if cut == 0 || (i+1)%cut != 0 {
			continue
		}
		if err := w.Flush(); err != nil {
			t.Fatalf("flush: %v", err)
		}
		state, size, err := w.Checkpoint()
		if err != nil {
			t.Fatalf("checkpoint: %v", err)
		}
		held := w.Held()
		if size != int64(out.Len()) {
			t.Fatalf("after a flush the checkpoint's length is %d, the writer wrote %d bytes", size, out.Len())
		}
		// What a crash after the checkpoint leaves: the bytes written,
		// then more that the sink cuts away before it resumes.
		w.Abort()
		out.WriteString("torn bytes of the crashed life")
		out.Truncate(int(size))
		if w, err = enc.Resume(&out, state); err != nil {
			t.Fatalf("resume: %v", err)
		}
		for _, h := range rows[i+1-held : i+1] {
			if err := w.Write(h); err != nil {
				t.Fatalf("write a held row again: %v", err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if w.Size() != int64(out.Len()) {
		t.Fatalf("Size %d, wrote %d bytes", w.Size(), out.Len())
	}
	return out.Bytes()
}

// ReadFile reads every row of the file, group by group, and checks the
// groups' row counts.
func ReadFile(t testing.TB, dec connector.BulkDecoder, file []byte) []row.Row {
	t.Helper()
	fr, err := dec.OpenFile(bytes.NewReader(file), int64(len(file)), "test.file")
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	var rows []row.Row
	for g, n := range fr.Groups() {
		before := len(rows)
		err := fr.ReadGroup(context.Background(), g, 0, 100, func(b *row.Batch) error {
			for _, c := range b.Changes {
				rows = append(rows, c.Row)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("group %d: %v", g, err)
		}
		if int64(len(rows)-before) != n {
			t.Fatalf("group %d: %d rows, the footer says %d", g, len(rows)-before, n)
		}
	}
	return rows
}

// BulkRoundTrip writes rows as a file without a resume and as one resumed
// every cut rows: the two files are byte-identical, and read back they
// give the rows written. Rows read with a projection of random columns
// hold the full rows' values there and NULL elsewhere.
func BulkRoundTrip(t *testing.T, c Bulk, rows []row.Row, cut int) {
	t.Helper()
	whole := WriteFile(t, c.Encoder, rows, 0)
	if cut > 0 {
		resumed := WriteFile(t, c.Encoder, rows, cut)
		if !bytes.Equal(whole, resumed) {
			t.Fatalf("a file resumed every %d rows differs from one written at once (%d and %d bytes)", cut, len(resumed), len(whole))
		}
	}
	got := ReadFile(t, c.Decoder(), whole)
	if len(got) != len(rows) {
		t.Fatalf("wrote %d rows, read %d", len(rows), len(got))
	}
	for k := range rows {
		for i, f := range c.Schema.Fields {
			if !row.Equal(got[k][i], rows[k][i]) {
				t.Fatalf("row %d column %s: wrote %v, read %v", k+1, f.Name, rows[k][i], got[k][i])
			}
		}
	}
	r := rand.New(rand.NewPCG(uint64(len(rows)), 7))
	needed := make([]bool, c.Schema.Len())
	for i := range needed {
		needed[i] = r.IntN(2) == 0
	}
	dec := c.Decoder()
	p, ok := dec.(connector.ProjectingBulkDecoder)
	if !ok {
		return
	}
	p.SetColumns(needed)
	for k, pr := range ReadFile(t, dec, whole) {
		for i, f := range c.Schema.Fields {
			want := row.NullValue
			if needed[i] {
				want = rows[k][i]
			}
			if !row.Equal(pr[i], want) {
				t.Fatalf("projection %v, row %d column %s: want %v, read %v", needed, k+1, f.Name, want, pr[i])
			}
		}
	}
}

// RandomNested makes a value of type t as RandomValue does, and of the
// nested types too: ARRAY, MAP and ROW of any depth, empty now and then.
func RandomNested(rng *rand.Rand, t row.Type) row.Value {
	if !t.ID.Nested() {
		v := RandomValue(rng, t)
		if t.NotNull && v.IsNull() {
			return RandomNested(rng, t)
		}
		return v
	}
	if !t.NotNull && rng.IntN(8) == 0 {
		return row.NullValue
	}
	switch t.ID {
	case row.Array:
		items := make([]row.Value, rng.IntN(4))
		for i := range items {
			items[i] = RandomNested(rng, t.Elem())
		}
		return row.ArrayValue(items)
	case row.Map:
		n := rng.IntN(4)
		key := t.Key()
		key.NotNull = true
		keys, vals := make([]row.Value, n), make([]row.Value, n)
		for i := range keys {
			keys[i], vals[i] = RandomNested(rng, key), RandomNested(rng, t.Elem())
		}
		return row.MapValue(keys, vals)
	}
	fields := make([]row.Value, len(t.Fields()))
	for i, f := range t.Fields() {
		fields[i] = RandomNested(rng, f.Type)
	}
	return row.StructValue(fields)
}
