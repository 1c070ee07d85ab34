package windowop

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/aggop"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// sessionStep is a row (key, "hh:mm" event time on 2020-04-15, value) or,
// with key "", a watermark at the time.
type sessionStep struct {
	key, at string
	v       int
}

func wmStep(at string) sessionStep { return sessionStep{at: at} }

func hhmm(hm string) int64 { return optest.TS("2020-04-15 " + hm + ":00") }

// runSession feeds steps to a SESSION aggregate of COUNT(*), SUM(v) per
// key, snapshotting and restoring into a fresh operator after step
// restoreAfter (-1: never), and returns what it emitted with "-- wm"
// lines before each watermark's output, and the late count.
func runSession(t *testing.T, gap int64, opt WindowOptions, steps []sessionStep, restoreAfter int) ([]string, int64) {
	t.Helper()
	aggs := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Sum, Arg: 2, ArgType: optest.TBigInt}}
	mk := func() *SessionAgg { return optest.Must(NewSessionAgg(0, gap, []int{1}, aggs, opt)) }
	g := mk()
	out := &optest.Out{}
	var log []string
	for i, s := range steps {
		if s.key == "" {
			if err := g.Watermark(hhmm(s.at), out); err != nil {
				t.Fatal(err)
			}
			if lines := out.Take(); len(lines) > 0 {
				log = append(log, "-- wm "+s.at)
				log = append(log, lines...)
			}
		} else {
			c := optest.Change(row.Insert, row.TimestampValue(hhmm(s.at)), s.key, s.v)
			if err := g.Process(optest.Batch(c), out); err != nil {
				t.Fatal(err)
			}
			if len(out.Lines) > 0 {
				t.Fatalf("output on a row: %q", out.Lines)
			}
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
	if err := g.Watermark(operator.MaxWatermark, out); err != nil {
		t.Fatal(err)
	}
	if err := g.Finish(out); err != nil {
		t.Fatal(err)
	}
	if lines := out.Take(); len(lines) > 0 {
		log = append(log, "-- end")
		log = append(log, lines...)
	}
	if g.set.live != 0 || g.set.keyCount() != 0 || len(g.st.Free) != int(g.st.Slots) {
		t.Fatalf("state left at the end: %d sessions, %d keys, %d of %d slots in use", g.set.live, g.set.keyCount(), int(g.st.Slots)-len(g.st.Free), g.st.Slots)
	}
	n, _ := g.Dropped()
	return log, n
}

func TestSessionAgg(t *testing.T) {
	const gap = 5 * optest.Minute
	tests := []struct {
		name  string
		steps []sessionStep
		want  []string
		late  int64
	}{{
		name:  "a row in the gap merges two sessions",
		steps: []sessionStep{{"u", "08:00", 1}, {"u", "08:08", 2}, wmStep("08:04"), {"u", "08:04", 4}, wmStep("08:12"), wmStep("08:13")},
		want:  []string{"-- wm 08:13", "+I[u, 2020-04-15T08:00, 2020-04-15T08:13, 2020-04-15T08:12:59.999, 3, 7]"},
	}, {
		name:  "the watermark closes a session before the gap-closing row arrives",
		steps: []sessionStep{{"u", "08:00", 1}, {"u", "08:08", 2}, wmStep("08:05"), {"u", "08:04", 4}},
		want: []string{
			"-- wm 08:05", "+I[u, 2020-04-15T08:00, 2020-04-15T08:05, 2020-04-15T08:04:59.999, 1, 1]",
			"-- end", "+I[u, 2020-04-15T08:04, 2020-04-15T08:13, 2020-04-15T08:12:59.999, 2, 6]",
		},
	}, {
		name:  "windows that touch merge",
		steps: []sessionStep{{"u", "08:00", 1}, {"u", "08:05", 2}, wmStep("08:09")},
		want:  []string{"-- end", "+I[u, 2020-04-15T08:00, 2020-04-15T08:10, 2020-04-15T08:09:59.999, 2, 3]"},
	}, {
		name:  "a late row alone is dropped, one reaching an open session joins it",
		steps: []sessionStep{{"u", "08:18", 1}, wmStep("08:20"), {"u", "08:10", 2}, {"u", "08:14", 4}, {"v", "08:10", 8}},
		want:  []string{"-- end", "+I[u, 2020-04-15T08:14, 2020-04-15T08:23, 2020-04-15T08:22:59.999, 2, 5]"},
		late:  2,
	}, {
		name: "keys have their own sessions; those ending together fire in opening order",
		steps: []sessionStep{{"b", "08:00", 1}, {"a", "08:00", 2}, {"a", "08:03", 4}, {"b", "08:20", 8},
			wmStep("08:08"), wmStep("09:00")},
		want: []string{
			"-- wm 08:08", "+I[b, 2020-04-15T08:00, 2020-04-15T08:05, 2020-04-15T08:04:59.999, 1, 1]",
			"+I[a, 2020-04-15T08:00, 2020-04-15T08:08, 2020-04-15T08:07:59.999, 2, 6]",
			"-- wm 09:00", "+I[b, 2020-04-15T08:20, 2020-04-15T08:25, 2020-04-15T08:24:59.999, 1, 8]",
		},
	}, {
		name: "rows touching two sessions each join three",
		steps: []sessionStep{{"u", "08:00", 1}, {"u", "08:10", 2}, {"u", "08:20", 4}, {"u", "08:05", 8},
			{"u", "08:15", 16}},
		want: []string{"-- end", "+I[u, 2020-04-15T08:00, 2020-04-15T08:25, 2020-04-15T08:24:59.999, 5, 31]"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for restore := -1; restore < len(tt.steps); restore++ {
				got, late := runSession(t, gap, WindowOptions{}, tt.steps, restore)
				if !slices.Equal(got, tt.want) || late != tt.late {
					t.Fatalf("restore after step %d: got (late %d)\n%s\nwant (late %d)\n%s", restore, late, strings.Join(got, "\n"), tt.late, strings.Join(tt.want, "\n"))
				}
			}
		})
	}
}

// TestSessionAggBatch: in batch mode no row is late and every session
// fires at the end, merged over the whole input.
func TestSessionAggBatch(t *testing.T) {
	steps := []sessionStep{{"u", "08:00", 1}, {"u", "08:08", 2}, wmStep("08:30"), {"u", "08:04", 4}}
	got, late := runSession(t, 5*optest.Minute, WindowOptions{Batch: true}, steps, -1)
	want := []string{"-- end", "+I[u, 2020-04-15T08:00, 2020-04-15T08:13, 2020-04-15T08:12:59.999, 3, 7]"}
	if !slices.Equal(got, want) || late != 0 {
		t.Fatalf("got (late %d)\n%s\nwant\n%s", late, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSessionAggErrors(t *testing.T) {
	if _, err := NewSessionAgg(0, 0, nil, nil, WindowOptions{}); err == nil || !strings.Contains(err.Error(), "gap must be positive") {
		t.Fatalf("zero gap: %v", err)
	}
	g := optest.Must(NewSessionAgg(0, optest.Minute, nil, []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}}, WindowOptions{}))
	err := g.Process(optest.Batch(optest.Change(row.Delete, row.TimestampValue(hhmm("08:00")))), &optest.Out{})
	if err == nil || !strings.Contains(err.Error(), "insert-only") {
		t.Fatalf("a -D: %v", err)
	}
	if err := g.Restore([]byte{9}); err == nil {
		t.Fatal("a bad state version restored")
	}
}

// TestSessionAggKeepsNoInputRow checks what ReleasesInput promises: once
// Process returned, the batch's rows may be overwritten (their slab
// given to the next batch) and the sessions still emit what they were
// given: STRING keys and a STRING MAX, sessions that merge, in batch
// mode and streaming.
func TestSessionAggKeepsNoInputRow(t *testing.T) {
	aggs := []aggop.AggCall{{Func: aggop.CountStar, Arg: -1}, {Func: aggop.Max, Arg: 2, ArgType: row.Type{ID: row.String}}}
	run := func(batch, clobber bool) []string {
		g := optest.Must(NewSessionAgg(0, 2*optest.Minute, []int{1}, aggs, WindowOptions{Batch: batch}))
		if !g.ReleasesInput() {
			t.Fatal("ReleasesInput is false")
		}
		out := &optest.Out{}
		// The strings point into one block, as a decoder's do, which
		// the next batch's bytes overwrite. Rows of a key come 1 to 3
		// minutes apart, out of order: sessions open, extend and merge.
		block := make([]byte, 64)
		for i := range 60 {
			n := copy(block, fmt.Sprintf("key-%d", i%3))
			m := copy(block[n:], fmt.Sprintf("value %02d", (i*7)%40))
			name, val := unsafe.String(&block[0], n), unsafe.String(&block[n], m)
			at := int64(i/3*(1+i%4)) * optest.Minute / 2
			b := optest.Batch(row.Change{Kind: row.Insert, Row: row.Row{row.TimestampValue(at), row.StringValue(name), row.StringValue(val)}})
			if err := g.Process(b, out); err != nil {
				t.Fatal(err)
			}
			if clobber {
				for _, c := range b.Changes {
					for j := range c.Row {
						c.Row[j] = row.StringValue("clobbered")
					}
				}
				copy(block, "################################")
			}
			if !batch && i%10 == 9 {
				if err := g.Watermark(at-5*optest.Minute, out); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := g.Finish(out); err != nil {
			t.Fatal(err)
		}
		return out.Take()
	}
	for _, batch := range []bool{true, false} {
		want := run(batch, false)
		if got := run(batch, true); !slices.Equal(got, want) || len(want) < 3 {
			t.Fatalf("batch %v: rows overwritten after Process change the output\n%q\nwant\n%q", batch, got, want)
		}
		for _, l := range want {
			if strings.Contains(l, "clobbered") || strings.Contains(l, "#") {
				t.Fatalf("batch %v: %s", batch, l)
			}
		}
	}
}
