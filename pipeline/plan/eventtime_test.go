package plan

import (
	"math"
	"testing"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// TestEventTimeShifted: a watermark that is the time attribute less a
// constant (read without its expression's calls, expr.Compiled.Shifted)
// gives what the expression gives, row for row: the value, the NULL
// time's error, and the overflow's error; as does one of another form.
func TestEventTimeShifted(t *testing.T) {
	schema := row.NewSchema(row.Field{Name: "id", Type: row.Of(row.BigInt)},
		row.Field{Name: "ts", Type: row.Type{ID: row.Timestamp, Precision: 3}})
	rows := []row.Row{
		{row.BigIntValue(1), row.TimestampValue(1_704_067_200_123_000)},
		{row.BigIntValue(2), row.TimestampValue(0)},
		{row.BigIntValue(3), row.TimestampValue(-5)},
		{row.BigIntValue(4), row.NullValue},
		{row.BigIntValue(5), row.TimestampValue(math.MinInt64 + 10)},
		{row.BigIntValue(6), row.TimestampValue(math.MaxInt64 - 10)},
	}
	for i, text := range []string{"ts - INTERVAL '1' SECOND", "ts + INTERVAL '1' SECOND", "INTERVAL '1' SECOND + ts", "ts - INTERVAL '1' MONTH", "ts"} {
		e, err := sql.ParseExpr(text)
		if err != nil {
			t.Fatal(err)
		}
		comp, err := compileExpr(nil, e, schema, "events")
		if err != nil {
			t.Fatal(err)
		}
		if shifted := i < 3; comp.Shifted != shifted {
			t.Fatalf("%s: Shifted = %v, want %v", text, comp.Shifted, shifted)
		}
		src := &Source{watermark: comp, Table: &Table{Root: &Node{Schema: schema, TimeAttr: 1}}}
		fast := eventTime(src)
		general := *comp
		general.Shifted = false
		slow := eventTime(&Source{watermark: &general, Table: src.Table})
		for _, r := range rows {
			fv, fok, ferr := fast(r)
			sv, sok, serr := slow(r)
			if fv != sv || fok != sok || (ferr == nil) != (serr == nil) || (ferr != nil && ferr.Error() != serr.Error()) {
				t.Errorf("%s over %v: %d, %v, %v; want %d, %v, %v", text, r, fv, fok, ferr, sv, sok, serr)
			}
		}
	}
}
