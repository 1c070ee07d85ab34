package row

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"testing/iotest"
)

// decodeAll reads up to rows rows from d, stopping at its first error,
// then ends it; it returns the rows and End's error.
func decodeAll(d *Decoder, rows int) ([]Row, error) {
	var out []Row
	for range rows {
		r := d.Row()
		if d.Err() != nil {
			break
		}
		out = append(out, r)
	}
	return out, d.End()
}

// TestStreamDecoder: a decoder over a stream, read a byte at a time or
// in large reads, gives the values a decoder over the same bytes does,
// strings longer than its window included, and holds a window, not the
// stream.
func TestStreamDecoder(t *testing.T) {
	long := StringValue(strings.Repeat("x", 3*streamWindow))
	var enc []byte
	const rows = 2000
	for i := range rows {
		r := Row(codecValues())
		if i == rows/2 {
			r = append(r, long)
		}
		enc = AppendRow(enc, r)
	}
	want, err := decodeAll(NewDecoder(enc), rows)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		name string
		r    func() *Decoder
	}{
		{"one byte at a time", func() *Decoder { return NewStreamDecoder(iotest.OneByteReader(bytes.NewReader(enc)), int64(len(enc))) }},
		{"large reads", func() *Decoder { return NewStreamDecoder(bytes.NewReader(enc), int64(len(enc))) }},
		{"size a bound", func() *Decoder { return NewStreamDecoder(bytes.NewReader(enc), int64(len(enc))+100) }},
	} {
		t.Run(r.name, func(t *testing.T) {
			d := r.r()
			got, err := decodeAll(d, rows)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d rows, want %d", len(got), len(want))
			}
			for i := range got {
				for j := range got[i] {
					if !same(got[i][j], want[i][j]) {
						t.Fatalf("row %d column %d: %#v, want %#v", i, j, got[i][j], want[i][j])
					}
				}
			}
			if cap(d.buf) > 2*len(long.s) || cap(d.buf) >= len(enc)/2 {
				t.Errorf("a window of %d bytes for a stream of %d", cap(d.buf), len(enc))
			}
		})
	}
}

// TestStreamDecoderErrors: a stream that ends early, holds bytes after
// the end, fails, or carries a count larger than its size could hold is
// an error, with the reader's error wrapped.
func TestStreamDecoderErrors(t *testing.T) {
	enc := AppendRow(nil, Row(codecValues()))
	short := NewStreamDecoder(bytes.NewReader(enc[:len(enc)-3]), int64(len(enc)))
	short.Row()
	if err := short.End(); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a short stream: %v", err)
	}
	long := NewStreamDecoder(bytes.NewReader(append(enc, 0)), int64(len(enc)+1))
	long.Row()
	if err := long.End(); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a byte after the end: %v", err)
	}
	failing := NewStreamDecoder(iotest.TimeoutReader(iotest.OneByteReader(bytes.NewReader(enc))), int64(len(enc)))
	failing.Row()
	if err := failing.End(); !errors.Is(err, iotest.ErrTimeout) {
		t.Errorf("a failing reader: %v", err)
	}
	// A row width of a million in a stream of 10 bytes.
	huge := NewStreamDecoder(bytes.NewReader([]byte{0xc0, 0x84, 0x3d, 0, 0, 0, 0, 0, 0, 0}), 10)
	if huge.Row(); !errors.Is(huge.Err(), ErrCorrupt) {
		t.Errorf("a count beyond the stream's size: %v", huge.Err())
	}
}

// FuzzStreamDecoder: a decoder over a stream read a byte at a time
// decodes what a decoder over the bytes does, and fails where it fails.
func FuzzStreamDecoder(f *testing.F) {
	f.Add(AppendRow(AppendRow(nil, Row(codecValues())), Row{StringValue("x")}))
	f.Add([]byte{byte(Decimal), 2, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		want, werr := decodeAll(NewDecoder(b), 4)
		got, gerr := decodeAll(NewStreamDecoder(iotest.OneByteReader(bytes.NewReader(b)), int64(len(b))), 4)
		if (werr == nil) != (gerr == nil) || len(got) != len(want) {
			t.Fatalf("bytes: %d rows, %v; stream: %d rows, %v", len(want), werr, len(got), gerr)
		}
		for i := range got {
			if string(AppendRow(nil, got[i])) != string(AppendRow(nil, want[i])) {
				t.Fatalf("row %d: %v, want %v", i, got[i], want[i])
			}
		}
	})
}
