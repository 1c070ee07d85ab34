package plan

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// TestConstSourceRestoresEnded: a constant table's position is the rows
// it read, so a source restored from a position taken at its end reads
// no row again, and one restored halfway reads the rest.
func TestConstSourceRestoresEnded(t *testing.T) {
	rows := []row.Row{{row.IntValue(1)}, {row.IntValue(2)}, {row.IntValue(3)}}
	ctx := context.Background()
	s := &constSource{rows: rows}
	b, err := s.Read(ctx, 2)
	if err != nil || b.Len() != 2 {
		t.Fatalf("first read: %d rows, %v; want 2 rows and no error", b.Len(), err)
	}
	half, _ := s.Position()
	b, err = s.Read(ctx, 2)
	if !errors.Is(err, io.EOF) || b.Len() != 1 {
		t.Fatalf("second read: %d rows, %v; want the last row and EOF", b.Len(), err)
	}
	end, _ := s.Position()

	ended := &constSource{rows: rows}
	if err := ended.Restore(end); err != nil {
		t.Fatal(err)
	}
	if b, err := ended.Read(ctx, 10); !errors.Is(err, io.EOF) || b.Len() != 0 {
		t.Fatalf("restored at the end: %d rows, %v; want none and EOF", b.Len(), err)
	}
	resumed := &constSource{rows: rows}
	if err := resumed.Restore(half); err != nil {
		t.Fatal(err)
	}
	b, err = resumed.Read(ctx, 10)
	if !errors.Is(err, io.EOF) || b.Len() != 1 {
		t.Fatalf("restored halfway: %d rows, %v; want the last row and EOF", b.Len(), err)
	}
	if err := (&constSource{rows: rows}).Restore([]byte("4")); err == nil {
		t.Fatal("a position past the rows restored without error")
	}
}
