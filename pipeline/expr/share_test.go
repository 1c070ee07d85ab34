package expr

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// counted is how many times COUNTED(s) ran: a test function that gives
// s's length, and fails on 'bad'.
var counted atomic.Int64

func init() {
	register(map[string]*funcDef{"COUNTED": {min: 1, max: 1, build: func(c *compiler, e *sql.Call, a []*node) (*node, error) {
		ev := a[0].eval
		return &node{t: row.Type{ID: row.BigInt}, col: -1, e: e, eval: func(r row.Row) (row.Value, error) {
			counted.Add(1)
			v, err := ev(r)
			if err != nil || v.IsNull() {
				return row.NullValue, err
			}
			if v.Str() == "bad" {
				return row.NullValue, errors.New("bad")
			}
			return row.BigIntValue(int64(len(v.Str()))), nil
		}}, nil
	}}})
}

var shareTable = Table{Name: "t", Schema: row.NewSchema(
	row.Field{Name: "s", Type: mustType("STRING")},
	row.Field{Name: "k", Type: mustType("INT")},
)}

func compileAll(t *testing.T, texts ...string) []*Compiled {
	t.Helper()
	var out []*Compiled
	for _, text := range texts {
		e, err := sql.ParseExpr(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		c, err := Compile(e, shareTable, WithClock(func() time.Time { return time.Unix(0, 0) }))
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		out = append(out, c)
	}
	return out
}

// evalRow evaluates cs over r as a Calc does: the first is the filter,
// the others are evaluated when it passes. Each value or error is
// written as text.
func evalRow(cs []*Compiled, r row.Row) []string {
	var out []string
	for i, c := range cs {
		v, err := c.Eval(r)
		if err != nil {
			return append(out, "error: "+err.Error())
		}
		out = append(out, fmt.Sprint(v))
		if i == 0 && (v.IsNull() || !v.Bool()) {
			break
		}
	}
	return out
}

// runShared evaluates cs over each row, unshared and then shared (the
// memo row cleared per row), and returns both results and the number of
// COUNTED calls of each.
func runShared(t *testing.T, texts []string, rows []row.Row) (plain, shared [][]string, plainCalls, sharedCalls int64, sh *Shared) {
	t.Helper()
	cs := compileAll(t, texts...)
	sh, err := Share(cs)
	if err != nil {
		t.Fatal(err)
	}
	counted.Store(0)
	for _, r := range rows {
		plain = append(plain, evalRow(cs, r))
	}
	plainCalls = counted.Load()
	if sh == nil {
		return plain, plain, plainCalls, plainCalls, nil
	}
	counted.Store(0)
	buf := make(row.Row, sh.At+sh.Width)
	for _, r := range rows {
		copy(buf, r[:sh.At])
		buf[sh.At] = row.NullValue
		shared = append(shared, evalRow(sh.Exprs, buf))
	}
	return plain, shared, plainCalls, counted.Load(), sh
}

func shareRows(ss ...string) []row.Row {
	var rows []row.Row
	for i, s := range ss {
		v := row.StringValue(s)
		if s == "NULL" {
			v = row.NullValue
		}
		rows = append(rows, row.Row{v, row.IntValue(int32(i))})
	}
	return rows
}

func TestShareEvaluatesARepeatedCallOncePerRow(t *testing.T) {
	// q21's shape: the call in the WHERE and again in a CASE branch.
	texts := []string{
		"COUNTED(s) IS NOT NULL OR LOWER(s) IN ('apple', 'google')",
		"s",
		"CASE WHEN LOWER(s) = 'apple' THEN 0 WHEN LOWER(s) = 'google' THEN 1 ELSE COUNTED(s) END",
		"COUNTED(s) + 1",
	}
	rows := shareRows("apple", "google", "abc", "x", "NULL", "")
	plain, shared, pc, sc, sh := runShared(t, texts, rows)
	if sh == nil {
		t.Fatal("Share kept nothing")
	}
	if fmt.Sprint(plain) != fmt.Sprint(shared) {
		t.Fatalf("shared results %v, want %v", shared, plain)
	}
	// Unshared: once in the WHERE, twice more for the rows that pass
	// and reach the ELSE; shared: once a row.
	if sc != int64(len(rows)) {
		t.Errorf("COUNTED ran %d times over %d rows shared (%d unshared), want once a row", sc, len(rows), pc)
	}
	if pc <= sc {
		t.Errorf("unshared ran %d times, shared %d: nothing saved", pc, sc)
	}
	// LOWER(s) is shared too: it and COUNTED(s), each one slot.
	if sh.Width != 3 || sh.At != 1 {
		t.Errorf("memo at %d of width %d, want at 1 of width 3 (flag, two slots)", sh.At, sh.Width)
	}
}

func TestShareKeepsShortCircuits(t *testing.T) {
	// COUNTED fails on 'bad' and CAST on text that is no number: each is
	// written only where the row cannot reach it for those values, and
	// must still fail no row.
	texts := []string{
		"s = 'bad' OR COUNTED(s) > 1",
		"CASE WHEN s = 'bad' THEN -1 ELSE COUNTED(s) END",
		"IF(s = 'bad', 0, COUNTED(s) * 2)",
		"CASE WHEN s = 'bad' OR s = 'zz' THEN 0 ELSE CAST(s AS INT) END",
		"COALESCE(NULLIF(s, 'bad'), 'zz') = 'zz' OR CAST(s AS INT) > 100",
	}
	rows := shareRows("bad", "12", "zz", "345", "NULL")
	plain, shared, pc, sc, sh := runShared(t, texts, rows)
	if sh == nil {
		t.Fatal("Share kept nothing")
	}
	for i, r := range plain {
		for _, v := range r {
			if len(v) > 6 && v[:6] == "error:" {
				t.Fatalf("row %d fails unshared: %v", i, r)
			}
		}
	}
	if fmt.Sprint(plain) != fmt.Sprint(shared) {
		t.Fatalf("shared results %v, want %v", shared, plain)
	}
	if sc >= pc {
		t.Errorf("COUNTED ran %d times shared, %d unshared", sc, pc)
	}
}

func TestShareFailsWhereItFailedBefore(t *testing.T) {
	// The call that fails is evaluated for every row in the WHERE: the
	// row fails with the same error, shared or not.
	texts := []string{"COUNTED(s) > 0", "COUNTED(s)"}
	plain, shared, _, _, sh := runShared(t, texts, shareRows("ok", "bad", "fine"))
	if sh == nil {
		t.Fatal("Share kept nothing")
	}
	if fmt.Sprint(plain) != fmt.Sprint(shared) || fmt.Sprint(plain[1]) != "[error: bad]" {
		t.Fatalf("shared %v, unshared %v", shared, plain)
	}
}

func TestShareLeavesVolatileAndTrivialAlone(t *testing.T) {
	for _, texts := range [][]string{
		{"UUID() <> ''", "UUID()"},                               // random
		{"CAST(NOW() AS STRING) <> ''", "CAST(NOW() AS STRING)"}, // the clock, under a CAST
		{"k > 1", "k + 1", "k + 1"},                              // arithmetic: cheaper than the memo
		{"UPPER('a') = 'A'", "UPPER('a')"},                       // folded to a constant
		{"COUNTED(s) > 1", "LOWER(s)"},                           // nothing written twice
	} {
		cs := compileAll(t, texts...)
		sh, err := Share(cs)
		if err != nil {
			t.Fatal(err)
		}
		if sh != nil {
			t.Errorf("%q: shared (memo width %d), want nothing", texts, sh.Width)
		}
	}
}

func TestShareNestedCallsKeepOneSlotEach(t *testing.T) {
	// The inner call is written three times, twice inside the outer one:
	// once shared, the outer's second occurrence never evaluates it.
	texts := []string{"COUNTED(CAST(COUNTED(s) AS STRING)) > 0", "COUNTED(CAST(COUNTED(s) AS STRING))", "COUNTED(s)"}
	plain, shared, pc, sc, sh := runShared(t, texts, shareRows("a", "bcd", "efgh"))
	if sh == nil || fmt.Sprint(plain) != fmt.Sprint(shared) {
		t.Fatalf("shared %v, unshared %v", shared, plain)
	}
	if sc != 2*3 || pc != 5*3 {
		t.Errorf("COUNTED ran %d times shared, %d unshared, want 6 and 15", sc, pc)
	}
	// The outer call and the inner one: the CAST between them is written
	// only inside the outer call, so its second occurrence is not
	// evaluated and it has no slot.
	if sh.Width != 3 {
		t.Errorf("memo width %d, want 3", sh.Width)
	}
}

func TestShareAfterPathsRedirected(t *testing.T) {
	// The planner may redirect a field access to a column after the
	// input's (FieldPath.ReadAt): the memo goes after that column, and
	// the expressions compiled again read it there too.
	tab := Table{Name: "t", Schema: row.NewSchema(
		row.Field{Name: "r", Type: mustType("ROW<a STRING, b INT>")},
	)}
	var cs []*Compiled
	for _, text := range []string{"COUNTED(r.a) > 1", "COUNTED(r.a)"} {
		e, _ := sql.ParseExpr(text)
		c, err := Compile(e, tab)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range c.Paths {
			p.ReadAt(1)
		}
		cs = append(cs, c)
	}
	sh, err := Share(cs)
	if err != nil || sh == nil {
		t.Fatalf("Share: %v, %v", sh, err)
	}
	if sh.At != 2 {
		t.Fatalf("memo at %d, want 2 (after the path's column)", sh.At)
	}
	// Column 0 (the ROW) is NULL: only the redirected column is read.
	buf := make(row.Row, sh.At+sh.Width)
	buf[1] = row.StringValue("abcd")
	counted.Store(0)
	got := evalRow(sh.Exprs, buf)
	if fmt.Sprint(got) != "[true 4]" || counted.Load() != 1 {
		t.Fatalf("got %v after %d calls, want [true 4] after 1", got, counted.Load())
	}
}
