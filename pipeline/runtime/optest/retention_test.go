package optest

import (
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/joinop"
	"github.com/etld/etld/pipeline/runtime/windowop"
)

// Rows that joins and sessions keep past their batch are copies.
func TestKeptRowsDoNotPinInput(t *testing.T) {
	b := NewReadBlock()
	at := func(i int) row.Value { return row.TimestampValue(int64(i) * 1000) }

	t.Run("temporal join", func(t *testing.T) {
		j := joinop.NewTemporalJoin(temporalSpec(false))
		for i := range 4 {
			r := row.Row{row.BigIntValue(1), at(i), b.Str(i*5, 5)}
			for side := range 2 {
				if err := j.ProcessInput(side, &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: r}}}, &Discard{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, k := range j.Keys {
			for _, l := range k.Left {
				b.CheckRows(t, "held order", l.Row)
			}
			for _, v := range k.Versions {
				b.CheckRows(t, "version", v.Row)
			}
		}
	})
	t.Run("window join", func(t *testing.T) {
		j := joinop.NewWindowJoin(wjSpec(joinop.InnerJoin))
		for side := range 2 {
			r := row.Row{row.BigIntValue(1), at(0), at(10), b.Str(side*7, 6)}
			if err := j.ProcessInput(side, &row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: r}}}, nil); err != nil {
				t.Fatal(err)
			}
		}
		for _, w := range j.Windows {
			for _, k := range w.Keys {
				b.CheckRows(t, "window row", append(k.Rows[0], k.Rows[1]...)...)
			}
		}
	})
	t.Run("session table", func(t *testing.T) {
		s := Must(windowop.NewSessionTable(windowop.WindowTable{Spec: windowop.WindowSpec{Kind: windowop.Session, TimeCol: 0, Gap: 5 * Minute}, Keys: []int{1}}))
		for i := range 3 {
			r := row.Row{at(i), b.Str(0, 3), b.Str(i*4, 4)}
			if err := s.Process(&row.Batch{Changes: []row.Change{{Kind: row.Insert, Row: r}}}, &Out{}); err != nil {
				t.Fatal(err)
			}
		}
		if len(s.Held) == 0 {
			t.Fatal("no rows held")
		}
		for _, rows := range s.Held {
			b.CheckRows(t, "session row", rows...)
		}
	})
}
