package windowop

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// TestOverRowFuncs: LAG, LEAD, ROW_NUMBER, RANK and DENSE_RANK over the
// default frame (RANGE UNBOUNDED PRECEDING) with ties in the order key.
// The wanted rows are what Flink 2.3 gives for the same input: in
// streaming the peers of a time see one value, computed after all of them
// (LAG reads offset rows back from the last peer; RANK and DENSE_RANK
// count the rows up to the last peer); in batch each row is one position
// in the sorted partition (LAG/LEAD by position, RANK and DENSE_RANK as
// in SQL).
func TestOverRowFuncs(t *testing.T) {
	steps := []overStep{{"a", "08:01", 1}, {"a", "08:02", 2}, {"b", "08:02", 10}, {"a", "08:02", 3},
		{"b", "08:02", 20}, {"a", "08:03", 4}}
	lags := []RowFunc{{Kind: Lag, Arg: 2, Offset: 1, Default: -1}, {Kind: Lag, Arg: 2, Offset: 2, Default: 2}}
	ranks := []RowFunc{{Kind: RowNumber}, {Kind: Rank}, {Kind: DenseRank}}
	tests := []struct {
		name  string
		batch bool
		funcs []RowFunc
		want  []string
	}{{
		name:  "streaming LAG: peers read back from the last peer, its default too",
		funcs: lags,
		want: []string{"-- end", "+I[08:01, a, 1, 1, null, 1]", "+I[08:02, a, 2, 6, 2, 1]", "+I[08:02, b, 10, 30, 10, 20]",
			"+I[08:02, a, 3, 6, 2, 1]", "+I[08:02, b, 20, 30, 10, 20]", "+I[08:03, a, 4, 10, 3, 2]"},
	}, {
		name:  "batch LAG: by position, ties in arrival order",
		batch: true, funcs: lags,
		want: []string{"-- end", "+I[08:01, a, 1, 1, null, 1]", "+I[08:02, a, 2, 6, 1, 2]", "+I[08:02, b, 10, 30, null, 10]",
			"+I[08:02, a, 3, 6, 2, 1]", "+I[08:02, b, 20, 30, 10, 20]", "+I[08:03, a, 4, 10, 3, 2]"},
	}, {
		name:  "streaming ROW_NUMBER by arrival, RANK and DENSE_RANK count through the peers",
		funcs: ranks,
		want: []string{"-- end", "+I[08:01, a, 1, 1, 1, 1, 1]", "+I[08:02, a, 2, 6, 2, 3, 3]", "+I[08:02, b, 10, 30, 1, 2, 2]",
			"+I[08:02, a, 3, 6, 3, 3, 3]", "+I[08:02, b, 20, 30, 2, 2, 2]", "+I[08:03, a, 4, 10, 4, 4, 4]"},
	}, {
		name:  "batch ROW_NUMBER, RANK, DENSE_RANK as in SQL",
		batch: true, funcs: ranks,
		want: []string{"-- end", "+I[08:01, a, 1, 1, 1, 1, 1]", "+I[08:02, a, 2, 6, 2, 2, 2]", "+I[08:02, b, 10, 30, 1, 1, 1]",
			"+I[08:02, a, 3, 6, 3, 2, 2]", "+I[08:02, b, 20, 30, 2, 1, 1]", "+I[08:03, a, 4, 10, 4, 4, 3]"},
	}, {
		name:  "batch LEAD: the row offset rows on in the partition, else the default",
		batch: true, funcs: []RowFunc{{Kind: Lead, Arg: 2, Offset: 1, Default: -1}, {Kind: Lead, Arg: 2, Offset: 2, Default: 2}},
		want: []string{"-- end", "+I[08:01, a, 1, 1, 2, 3]", "+I[08:02, a, 2, 6, 3, 4]", "+I[08:02, b, 10, 30, 20, 10]",
			"+I[08:02, a, 3, 6, 4, 3]", "+I[08:02, b, 20, 30, null, 20]", "+I[08:03, a, 4, 10, null, 4]"},
	}, {
		name:  "batch PERCENT_RANK, CUME_DIST over the whole partition, peers alike",
		batch: true, funcs: []RowFunc{{Kind: PercentRank}, {Kind: CumeDist}},
		want: []string{"-- end", "+I[08:01, a, 1, 1, 0.0, 0.25]", "+I[08:02, a, 2, 6, 0.3333333333333333, 0.75]", "+I[08:02, b, 10, 30, 0.0, 1.0]",
			"+I[08:02, a, 3, 6, 0.3333333333333333, 0.75]", "+I[08:02, b, 20, 30, 0.0, 1.0]", "+I[08:03, a, 4, 10, 1.0, 1.0]"},
	}, {
		name:  "batch NTILE; beside it CUME_DIST by position, as Flink",
		batch: true, funcs: []RowFunc{{Kind: NTile, Offset: 3}, {Kind: CumeDist}},
		want: []string{"-- end", "+I[08:01, a, 1, 1, 1, 0.25]", "+I[08:02, a, 2, 6, 1, 0.5]", "+I[08:02, b, 10, 30, 1, 0.5]",
			"+I[08:02, a, 3, 6, 2, 0.75]", "+I[08:02, b, 20, 30, 2, 1.0]", "+I[08:03, a, 4, 10, 3, 1.0]"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := OverSpec{Keys: []int{1}, Preceding: Unbounded, Aggs: []aggop.AggCall{overSum}, Funcs: tt.funcs}
			for restore := -1; restore < len(steps); restore++ {
				got, _ := runOver(t, spec, WindowOptions{Batch: tt.batch}, steps, restore)
				if !slices.Equal(got, tt.want) {
					t.Fatalf("restore after step %d: got\n%s\nwant\n%s", restore, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
				}
			}
		})
	}
}

// TestOverLateAtWatermark: a row whose time equals the watermark is late,
// and the watermark emits the rows of its own time (Flink's rule:
// timestamp <= watermark is late, and a timer at the watermark fires).
func TestOverLateAtWatermark(t *testing.T) {
	spec := OverSpec{Keys: []int{1}, Rows: true, Preceding: Unbounded, Aggs: []aggop.AggCall{overCount}}
	steps := []overStep{{"a", "08:01", 1}, wmStep("08:01"), {"a", "08:01", 2}, {"a", "08:02", 3}}
	got, late := runOver(t, spec, WindowOptions{}, steps, -1)
	want := []string{"-- wm 08:01", "+I[08:01, a, 1, 1]", "-- end", "+I[08:02, a, 3, 2]"}
	if !slices.Equal(got, want) || late != 1 {
		t.Fatalf("got (late %d)\n%s\nwant (late 1)\n%s", late, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// procBatch is one input batch of a processing-time OVER aggregate: rows
// (key, "hh:mm" processing time, v) and what the batch emits.
type procBatch struct {
	rows []overStep
	want []string
}

// runProc feeds batches to a processing-time OVER aggregate, restoring
// from a snapshot after batch restoreAfter, and checks each batch's
// output, emitted at once, without a watermark.
func runProc(t *testing.T, spec OverSpec, batches []procBatch, restoreAfter int) {
	t.Helper()
	spec.ProcTime = true
	mk := func() *OverAgg { return optest.Must(NewOverAgg(spec, WindowOptions{})) }
	g := mk()
	for i, b := range batches {
		var cs []row.Change
		for _, s := range b.rows {
			cs = append(cs, optest.Change(row.Insert, row.TimestampValue(hhmm(s.at)), s.key, s.v))
		}
		out := &optest.Out{}
		if err := g.Process(optest.Batch(cs...), out); err != nil {
			t.Fatal(err)
		}
		got := out.Take()
		for j := range got {
			got[j] = strings.ReplaceAll(got[j], "2020-04-15T", "")
		}
		if !slices.Equal(got, b.want) {
			t.Fatalf("restore after %d: batch %d: got\n%s\nwant\n%s", restoreAfter, i, strings.Join(got, "\n"), strings.Join(b.want, "\n"))
		}
		if i == restoreAfter {
			state, err := g.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			g = mk()
			if err := g.Restore(state); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestOverProcTime: rows ordered by processing time are emitted as they
// arrive, in arrival order: a ROWS frame and RANGE UNBOUNDED see each row
// alone (Flink's ProcTimeRowsBoundedPrecedingFunction and
// ProcTimeUnboundedPrecedingFunction); a bounded RANGE frame makes the
// rows of one time peers and measures the frame on the time column.
func TestOverProcTime(t *testing.T) {
	tests := []struct {
		name    string
		spec    OverSpec
		batches []procBatch
	}{{
		name: "ROWS 1 PRECEDING, in arrival order whatever the times",
		spec: OverSpec{Keys: []int{1}, Rows: true, Preceding: 1, Aggs: []aggop.AggCall{overSum}, Funcs: []RowFunc{{Kind: RowNumber}}},
		batches: []procBatch{
			{[]overStep{{"a", "08:00", 1}, {"b", "08:00", 10}, {"a", "08:00", 2}}, []string{"+I[08:00, a, 1, 1, 1]", "+I[08:00, b, 10, 10, 1]", "+I[08:00, a, 2, 3, 2]"}},
			{[]overStep{{"a", "08:01", 3}}, []string{"+I[08:01, a, 3, 5, 3]"}},
		},
	}, {
		name: "RANGE UNBOUNDED: each row alone, LAG and RANK by arrival",
		spec: OverSpec{Keys: []int{1}, Preceding: Unbounded, Aggs: []aggop.AggCall{overCount},
			Funcs: []RowFunc{{Kind: Lag, Arg: 2, Offset: 1, Default: -1}, {Kind: Rank}}},
		batches: []procBatch{
			{[]overStep{{"a", "08:00", 1}, {"a", "08:00", 2}}, []string{"+I[08:00, a, 1, 1, null, 1]", "+I[08:00, a, 2, 2, 1, 2]"}},
			{[]overStep{{"a", "08:00", 3}}, []string{"+I[08:00, a, 3, 3, 2, 3]"}},
		},
	}, {
		name: "RANGE 1 minute: rows of one time are peers, older rows leave",
		spec: OverSpec{Keys: []int{1}, Preceding: optest.Minute, Aggs: []aggop.AggCall{overSum}},
		batches: []procBatch{
			{[]overStep{{"a", "08:00", 1}, {"a", "08:00", 2}, {"a", "08:01", 4}}, []string{"+I[08:00, a, 1, 3]", "+I[08:00, a, 2, 3]", "+I[08:01, a, 4, 7]"}},
			{[]overStep{{"a", "08:02", 8}}, []string{"+I[08:02, a, 8, 12]"}},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for restore := -1; restore < len(tt.batches); restore++ {
				runProc(t, tt.spec, tt.batches, restore)
			}
		})
	}
}

// TestOverRestoresVersion1: a snapshot written before the partitions'
// row and time counts (version 1: no counts after each partition's rows)
// restores; its aggregates and LAG go on, and the ranks count from the
// restore.
func TestOverRestoresVersion1(t *testing.T) {
	spec := OverSpec{Keys: []int{1}, Rows: true, Preceding: Unbounded, Aggs: []aggop.AggCall{overCount},
		Funcs: []RowFunc{{Kind: Lag, Arg: 2, Offset: 1, Default: -1}}}
	g := optest.Must(NewOverAgg(spec, WindowOptions{}))
	out := &optest.Out{}
	if err := g.Process(optest.Batch(optest.Change(row.Insert, row.TimestampValue(hhmm("08:00")), "a", 5)), out); err != nil {
		t.Fatal(err)
	}
	if err := g.Watermark(hhmm("08:00"), out); err != nil {
		t.Fatal(err)
	}
	// The version-1 layout, as OverAgg wrote it: no partition counts.
	p := g.parts[string(row.KeyOf(nil, row.Row{row.NullValue, row.StringValue("a")}, spec.Keys))]
	buf := aggop.AppendClock(1, g.wm, g.timeID, g.dropped)
	buf = binary.AppendUvarint(buf, g.seq)
	buf = binary.AppendUvarint(buf, 1)
	buf = binary.AppendUvarint(buf, uint64(p.id))
	buf = binary.AppendUvarint(buf, 0) // frame
	buf = binary.AppendUvarint(buf, uint64(p.hist.n))
	for i := range p.hist.n {
		buf = row.AppendRow(buf, p.hist.at(i))
	}
	buf = binary.AppendUvarint(buf, 0) // queue
	buf = g.st.AppendState(buf, nil)

	spec.Funcs = append(spec.Funcs, RowFunc{Kind: RowNumber})
	r := optest.Must(NewOverAgg(spec, WindowOptions{}))
	if err := r.Restore(buf); err != nil {
		t.Fatal(err)
	}
	out = &optest.Out{}
	if err := r.Process(optest.Batch(optest.Change(row.Insert, row.TimestampValue(hhmm("08:01")), "a", 6)), out); err != nil {
		t.Fatal(err)
	}
	if err := r.Watermark(hhmm("08:01"), out); err != nil {
		t.Fatal(err)
	}
	if got, want := out.Take(), []string{"+I[2020-04-15T08:01, a, 6, 2, 5, 1]"}; !slices.Equal(got, want) {
		t.Fatalf("after a version-1 restore: %q, want %q", got, want)
	}
}
