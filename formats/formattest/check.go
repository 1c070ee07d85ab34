package formattest

import (
	"bytes"
	"errors"
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Check says what CheckRecord asks of a format beyond what it asks of
// every format.
type Check struct {
	// Explains reports whether a decode error says where or what (a byte
	// offset, a column, the member at fault); nil: any DecodeError does.
	Explains func(err error) bool
	// MaxChanges is the most changes one record may give; nil: no bound.
	MaxChanges func(rec []byte) int
	// Exact: a change read is written as a record that reads back with
	// the very values read, not only as one whose writing is stable.
	Exact bool
	// Lossy reports a row the format cannot write so that it reads back
	// (CSV without a null literal writes NULL as an empty field, which
	// reads back as ''); such a row is not written back.
	Lossy func(r row.Row) bool
	// MayRefuse: the encoder may refuse a value it read (CSV without
	// quoting or escaping, a value holding the delimiter), with an error.
	MayRefuse bool
	// Valid reports whether an encoded record is well-formed (JSON:
	// encoding/json.Valid); nil: not checked.
	Valid func(rec []byte) bool
}

// CheckRecord is what a fuzz target asks of any record: decoding it
// either fails with a *connector.DecodeError that says where or what
// (Check.Explains) and appends nothing, or gives changes (at most
// Check.MaxChanges) that each write as a record that reads back as one
// change of the same kind (add or retract) and writes again as the same
// bytes; with Check.Exact, with the very values read.
func CheckRecord(t *testing.T, c Codec, rec []byte, k Check) {
	t.Helper()
	b := row.NewBatch(2, c.Schema.Len())
	if err := c.Decoder.Decode(rec, b); err != nil {
		var de *connector.DecodeError
		if !errors.As(err, &de) {
			t.Fatalf("error is not a DecodeError: %v", err)
		}
		if k.Explains != nil && !k.Explains(err) {
			t.Fatalf("error says neither where nor what: %v", err)
		}
		if b.Len() != 0 {
			t.Fatal("a failed record appended changes")
		}
		return
	}
	if k.MaxChanges != nil && b.Len() > k.MaxChanges(rec) {
		t.Fatalf("one record gave %d changes, at most %d expected", b.Len(), k.MaxChanges(rec))
	}
	for _, ch := range b.Changes {
		if k.Lossy != nil && k.Lossy(ch.Row) {
			continue
		}
		once, err := c.Encoder.Encode(nil, ch.Kind, ch.Row)
		if err != nil {
			if k.MayRefuse {
				continue
			}
			t.Fatalf("cannot write %v: %v", ch, err)
		}
		if k.Valid != nil && !k.Valid(once) {
			t.Fatalf("wrote a malformed record %q", once)
		}
		back := row.NewBatch(1, c.Schema.Len())
		if err := c.Decoder.Decode(once, back); err != nil || back.Len() != 1 {
			t.Fatalf("cannot read back %q: %d changes, %v", once, back.Len(), err)
		}
		got := back.Changes[0]
		if got.Kind.IsAdd() != ch.Kind.IsAdd() {
			t.Fatalf("read %v, wrote %q, read back %v", ch, once, got)
		}
		if k.Exact {
			for i, v := range ch.Row {
				if !row.Equal(v, got.Row[i]) {
					t.Fatalf("column %d: read %v, then %v from %q", i, v, got.Row[i], once)
				}
			}
		}
		if twice, _ := c.Encoder.Encode(nil, got.Kind, got.Row); !bytes.Equal(once, twice) {
			t.Fatalf("unstable: %q then %q", once, twice)
		}
	}
}
