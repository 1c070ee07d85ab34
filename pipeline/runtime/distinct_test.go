package runtime

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

func TestDistinct(t *testing.T) {
	d := NewDistinct()
	out := &aggOut{}
	in := aggBatch(
		aggChange(I, "a", 1), aggChange(I, "a", 1), aggChange(I, "a", int32(1)), aggChange(I, "a", nil),
		aggChange(I, "b", 1), aggChange(I, "a", nil), aggChange(I, 0.0, 1), aggChange(I, math.Copysign(0, -1), 1),
	)
	if err := d.Process(in, out); err != nil {
		t.Fatal(err)
	}
	if err := d.Process(aggBatch(aggChange(I, "b", 1), aggChange(I, "c", 2)), out); err != nil {
		t.Fatal(err)
	}
	if err := d.Watermark(MaxWatermark, out); err != nil {
		t.Fatal(err)
	}
	if err := d.Finish(out); err != nil {
		t.Fatal(err)
	}
	// BIGINT 1 and INT 1 are different rows of different types; 0.0 and
	// -0.0 are one group, as row.KeyOf makes them.
	want := []string{"+I[a, 1]", "+I[a, 1]", "+I[a, null]", "+I[b, 1]", "+I[0.0, 1]", "+I[c, 2]"}
	if got := out.take(); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if d.Rows() != 6 {
		t.Errorf("Rows() = %d, want 6", d.Rows())
	}
	// The first occurrence is passed on as it is, without a copy.
	rec := &rowRecorder{}
	r := row.Row{row.StringValue("z")}
	if err := d.Process(aggBatch(row.Change{Kind: I, Row: r}), rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.rows) != 1 || &rec.rows[0][0] != &r[0] {
		t.Errorf("the emitted row is not the input row")
	}
}

type rowRecorder struct{ rows []row.Row }

func (r *rowRecorder) Emit(_ row.Kind, x row.Row) { r.rows = append(r.rows, x) }

func TestDistinctRefusesUpdates(t *testing.T) {
	for _, k := range []row.Kind{UB, UA, D} {
		err := NewDistinct().Process(aggBatch(aggChange(I, 1), aggChange(k, 1)), &aggOut{})
		if err == nil || !strings.Contains(err.Error(), "change 1: input planned as insert-only carries a "+k.String()) {
			t.Errorf("%s: Process = %v", k, err)
		}
	}
}
