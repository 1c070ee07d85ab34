package aggop

import (
	"fmt"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// checkEach is Check as it was, every aggregate's argument and FILTER
// tested in turn: the reference for the deduplicated tests.
func checkEach(s *Store, r row.Row) error {
	for i := range s.Aggs {
		a := &s.Aggs[i]
		if a.kind != accRows {
			if err := a.checkArg(r[a.call.Arg]); err != nil {
				return err
			}
		}
		if a.call.HasFilter {
			if v := r[a.call.Filter]; !v.IsNull() && v.Type() != row.Boolean {
				return fmt.Errorf("%s: filter value %s has type %s, want BOOLEAN", a.call, v, v.Type())
			}
		}
	}
	return nil
}

// TestCheckOnceAColumn: Check tests each argument column (of one type)
// and each FILTER column once, however many aggregates read it (q15's
// twelve aggregates: two columns, three filters), and reports the same
// first failure as testing every aggregate in turn, for rows with a
// wrong value in any column.
func TestCheckOnceAColumn(t *testing.T) {
	// Columns: 0 bidder BIGINT, 1 auction BIGINT, 2-4 filters, 5 price DOUBLE.
	calls := []AggCall{{Func: CountStar, Arg: -1}}
	for f := 2; f <= 4; f++ {
		calls = append(calls, AggCall{Func: Count, Arg: f, ArgType: row.Type{ID: row.Boolean}, HasFilter: true, Filter: f})
	}
	for _, col := range []int{0, 1} {
		calls = append(calls, AggCall{Func: CountDistinct, Arg: col, ArgType: optest.TBigInt})
		for f := 2; f <= 4; f++ {
			calls = append(calls, AggCall{Func: CountDistinct, Arg: col, ArgType: optest.TBigInt, HasFilter: true, Filter: f})
		}
	}
	calls = append(calls, AggCall{Func: Sum, Arg: 5, ArgType: optest.TDouble, HasFilter: true, Filter: 3}, AggCall{Func: Max, Arg: 0, ArgType: optest.TBigInt})
	for _, insertOnly := range []bool{true, false} {
		s := NewStore(calls, insertOnly, false)
		// The two BIGINT columns, the three COUNTs' BOOLEAN arguments, the
		// three filters and the DOUBLE; an insert-only MAX also tests its
		// BIGINT for a word (a test of its own).
		want := 2 + 3 + 3 + 1
		if insertOnly {
			want++
		}
		if len(s.checks) != want {
			t.Errorf("insert-only %v: %d tests a row, want %d", insertOnly, len(s.checks), want)
		}
		good := row.Row{row.BigIntValue(1), row.BigIntValue(2), row.BoolValue(true), row.NullValue, row.BoolValue(false), row.DoubleValue(1)}
		bad := []row.Value{row.StringValue("x"), row.IntValue(3), row.DoubleValue(2), row.BigIntValue(4)}
		for col := range good {
			for _, b := range bad {
				r := append(row.Row{}, good...)
				r[col] = b
				got, want := fmt.Sprint(s.Check(r)), fmt.Sprint(checkEach(s, r))
				if got != want {
					t.Errorf("insert-only %v, column %d = %s: %s, want %s", insertOnly, col, b, got, want)
				}
			}
		}
		if err := s.Check(good); err != nil {
			t.Errorf("insert-only %v: %v", insertOnly, err)
		}
	}
}
