package aggop

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

func TestDistinct(t *testing.T) {
	d := NewDistinct()
	out := &optest.Out{}
	in := optest.Batch(
		optest.Change(I, "a", 1), optest.Change(I, "a", 1), optest.Change(I, "a", int32(1)), optest.Change(I, "a", nil),
		optest.Change(I, "b", 1), optest.Change(I, "a", nil), optest.Change(I, 0.0, 1), optest.Change(I, math.Copysign(0, -1), 1),
	)
	if err := d.Process(in, out); err != nil {
		t.Fatal(err)
	}
	if err := d.Process(optest.Batch(optest.Change(I, "b", 1), optest.Change(I, "c", 2)), out); err != nil {
		t.Fatal(err)
	}
	if err := d.Watermark(operator.MaxWatermark, out); err != nil {
		t.Fatal(err)
	}
	if err := d.Finish(out); err != nil {
		t.Fatal(err)
	}
	// BIGINT 1 and INT 1 are different rows of different types; 0.0 and
	// -0.0 are one group, as row.KeyOf makes them.
	want := []string{"+I[a, 1]", "+I[a, 1]", "+I[a, null]", "+I[b, 1]", "+I[0.0, 1]", "+I[c, 2]"}
	if got := out.Take(); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if d.Rows() != 6 {
		t.Errorf("Rows() = %d, want 6", d.Rows())
	}
	// The first occurrence is passed on as it is, without a copy.
	rec := &rowRecorder{}
	r := row.Row{row.StringValue("z")}
	if err := d.Process(optest.Batch(row.Change{Kind: I, Row: r}), rec); err != nil {
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
		err := NewDistinct().Process(optest.Batch(optest.Change(I, 1), optest.Change(k, 1)), &optest.Out{})
		if err == nil || !strings.Contains(err.Error(), "change 1: input planned as insert-only carries a "+k.String()) {
			t.Errorf("%s: Process = %v", k, err)
		}
	}
}
