package udfop

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
	"github.com/etld/etld/pipeline/runtime/optest"
)

// length is a fake scalar function: the length of a string, failing on
// "bad"; it counts its calls and the rows they carried.
type length struct{ calls, rows int }

func (l *length) Scalar(args [][]row.Value, n int, out []row.Value, errs []error) error {
	l.calls++
	l.rows += n
	for i := range n {
		s := args[0][i]
		if s.IsNull() {
			return errors.New("called with NULL")
		}
		if s.Str() == "bad" {
			errs[i] = errors.New("refused")
			continue
		}
		out[i] = row.BigIntValue(int64(len(s.Str())))
	}
	return nil
}

func (l *length) Close(context.Context) error { return nil }

func col(i int) func(row.Row) (row.Value, error) {
	return func(r row.Row) (row.Value, error) { return r[i], nil }
}

// TestCallsBatchAndFailures calls the function once for a batch, passes
// NULL without a call, and keeps an updating input consistent when a
// row fails: an update whose new row fails retracts its old one.
func TestCallsBatchAndFailures(t *testing.T) {
	fn := &length{}
	var rejected []string
	c := &Calls{
		Calls:  []Call{{Name: "len", Args: []func(row.Row) (row.Value, error){col(1)}, Start: func(context.Context) (ScalarFunc, error) { return fn, nil }}},
		Input:  row.NewSchema(row.Field{Name: "k", Type: row.Of(row.BigInt)}, row.Field{Name: "s", Type: row.Of(row.String)}),
		Reject: func(b connector.BadRecord) error { rejected = append(rejected, b.Err.Error()); return nil },
	}
	if err := c.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := &optest.Out{}
	in := optest.Batch(
		optest.Ins(1, "ab"),
		optest.Ins(2, nil),
		optest.UB(1, "ab"), optest.UA(1, "bad"),
		optest.UB(3, "bad"), optest.UA(3, "xyz"),
		optest.Del(2, nil),
	)
	if err := c.Process(in, out); err != nil {
		t.Fatal(err)
	}
	if err := c.Finish(out); err != nil {
		t.Fatal(err)
	}
	want := []string{"+I[1, ab, 2]", "+I[2, null, null]", "-D[1, ab, 2]", "+I[3, xyz, 3]", "-D[2, null, null]"}
	if got := out.Take(); !slices.Equal(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if fn.calls != 1 || fn.rows != 5 {
		t.Errorf("%d calls of %d rows, want 1 call of 5", fn.calls, fn.rows)
	}
	if len(rejected) != 2 || !strings.Contains(rejected[0], "function len: refused") {
		t.Errorf("rejected %v", rejected)
	}
}

// chars is a fake table function: a row per character, none for "".
type chars struct{}

func (chars) Table(args [][]row.Value, n int, errs []error) ([]int, []row.Row, error) {
	var rowOf []int
	var rows []row.Row
	for i := range n {
		for _, c := range args[0][i].Str() {
			rowOf, rows = append(rowOf, i), append(rows, row.Row{row.StringValue(string(c))})
		}
	}
	return rowOf, rows, nil
}

func (chars) Close(context.Context) error { return nil }

// TestLateralKinds joins each row with its function rows, carrying the
// row's kind, and pads a row without any under LEFT.
func TestLateralKinds(t *testing.T) {
	for _, left := range []bool{false, true} {
		l := &Lateral{Name: "chars", Args: []func(row.Row) (row.Value, error){col(1)}, Width: 1, Left: left,
			Start: func(context.Context) (TableFunc, error) { return chars{}, nil }}
		if err := l.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		out := &optest.Out{}
		if err := l.Process(optest.Batch(optest.Ins(1, "ab"), optest.Ins(2, ""), optest.Del(1, "ab"), optest.Ins(3, nil)), out); err != nil {
			t.Fatal(err)
		}
		want := []string{"+I[1, ab, a]", "+I[1, ab, b]", "-D[1, ab, a]", "-D[1, ab, b]"}
		if left {
			want = []string{"+I[1, ab, a]", "+I[1, ab, b]", "+I[2, , null]", "-D[1, ab, a]", "-D[1, ab, b]", "+I[3, null, null]"}
		}
		if got := out.Take(); !slices.Equal(got, want) {
			t.Errorf("left=%v: got %v\nwant %v", left, got, want)
		}
	}
}

// carvingOut is an optest.Out that lends rows (operator.RowCarver) from
// one slab whose old values are garbage, as a reused slab's are, and
// counts them.
type carvingOut struct {
	optest.Out
	slab   []row.Value
	carved int
}

func (o *carvingOut) CarveRow(w int) row.Row {
	r := o.slab[:w:w]
	for i := range r {
		r[i] = row.StringValue("garbage")
	}
	o.slab = o.slab[w:]
	o.carved++
	return r
}

// TestCallsCarveRows: Calls builds each row it emits in the memory its
// emitter lends, but a -U held for its +U and the change after it; the
// changes are those emitted into a plain emitter, also with two calls,
// the second reading the first's result, and rows that fail.
func TestCallsCarveRows(t *testing.T) {
	str := func(i int) func(row.Row) (row.Value, error) {
		return func(r row.Row) (row.Value, error) {
			if r[i].IsNull() {
				return r[i], nil
			}
			return row.StringValue(strings.Repeat("x", int(r[i].Int64()))), nil
		}
	}
	for _, tc := range []struct {
		name   string
		calls  func() []Call
		in     func() *row.Batch
		want   []string
		carved int
	}{
		{"inserts", func() []Call {
			return []Call{{Name: "len", Args: []func(row.Row) (row.Value, error){col(1)}, Start: func(context.Context) (ScalarFunc, error) { return &length{}, nil }}}
		}, func() *row.Batch {
			return optest.Batch(optest.Ins(1, "ab"), optest.Ins(2, "bad"), optest.Ins(3, nil), optest.Ins(4, "abcd"))
		}, []string{"+I[1, ab, 2]", "+I[3, null, null]", "+I[4, abcd, 4]"}, 3},
		{"updates", func() []Call {
			return []Call{{Name: "len", Args: []func(row.Row) (row.Value, error){col(1)}, Start: func(context.Context) (ScalarFunc, error) { return &length{}, nil }}}
		}, func() *row.Batch {
			return optest.Batch(optest.Ins(1, "ab"), optest.UB(1, "ab"), optest.UA(1, "abc"), optest.UB(2, "bad"), optest.UA(2, "x"), optest.Ins(5, "y"), optest.Del(1, "abc"))
		}, []string{"+I[1, ab, 2]", "-U[1, ab, 2]", "+U[1, abc, 3]", "+I[2, x, 1]", "+I[5, y, 1]", "-D[1, abc, 3]"}, 3},
		{"two calls", func() []Call {
			return []Call{
				{Name: "len", Args: []func(row.Row) (row.Value, error){col(1)}, Start: func(context.Context) (ScalarFunc, error) { return &length{}, nil }},
				{Name: "len2", Args: []func(row.Row) (row.Value, error){str(2)}, Start: func(context.Context) (ScalarFunc, error) { return &length{}, nil }},
			}
		}, func() *row.Batch {
			return optest.Batch(optest.Ins(1, "ab"), optest.Ins(2, "bad"), optest.Ins(3, nil), optest.Ins(4, "abcd"))
		}, []string{"+I[1, ab, 2, 2]", "+I[3, null, null, null]", "+I[4, abcd, 4, 4]"}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(out interface {
				operator.Emitter
				Take() []string
			}) []string {
				c := &Calls{Calls: tc.calls(), Input: row.NewSchema(row.Field{Name: "k", Type: row.Of(row.BigInt)}, row.Field{Name: "s", Type: row.Of(row.String)}),
					Reject: func(connector.BadRecord) error { return nil }}
				if !c.CarvesRows() {
					t.Fatal("CarvesRows is false")
				}
				if err := c.Open(context.Background()); err != nil {
					t.Fatal(err)
				}
				if err := c.Process(tc.in(), out); err != nil {
					t.Fatal(err)
				}
				if err := c.Finish(out); err != nil {
					t.Fatal(err)
				}
				return out.Take()
			}
			plain := run(&optest.Out{})
			co := &carvingOut{slab: make([]row.Value, 64)}
			carved := run(co)
			if !slices.Equal(plain, tc.want) || !slices.Equal(carved, tc.want) {
				t.Fatalf("plain %v\ncarved %v\nwant %v", plain, carved, tc.want)
			}
			if co.carved != tc.carved {
				t.Errorf("%d rows carved, want %d", co.carved, tc.carved)
			}
		})
	}
}

// slabRows is a batch origin that says its rows are slabs of values
// alone (operator.SlabRows), or not.
type slabRows bool

func (s slabRows) SlabRowsOnly() bool { return bool(s) }
func (slabRows) Position(int) string  { return "" }

// TestCallsReleasesInput: Calls copies the values of its input, so it
// gives back an input whose rows are slabs of values alone, unless a row
// of it went to Reject (the bad record may keep it); a source's own
// batch, which may hold its read buffers, it does not.
func TestCallsReleasesInput(t *testing.T) {
	for _, tc := range []struct {
		name   string
		origin row.Origin
		rows   []row.Change
		want   bool
	}{
		{"slabs", slabRows(true), []row.Change{optest.Ins(1, "ab"), optest.Ins(2, "c")}, true},
		{"slabs, a row rejected", slabRows(true), []row.Change{optest.Ins(1, "ab"), optest.Ins(2, "bad")}, false},
		{"not only slabs", slabRows(false), []row.Change{optest.Ins(1, "ab")}, false},
		{"a source's batch", nil, []row.Change{optest.Ins(1, "ab")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Calls{
				Calls:  []Call{{Name: "len", Args: []func(row.Row) (row.Value, error){col(1)}, Start: func(context.Context) (ScalarFunc, error) { return &length{}, nil }}},
				Input:  row.NewSchema(row.Field{Name: "k", Type: row.Of(row.BigInt)}, row.Field{Name: "s", Type: row.Of(row.String)}),
				Reject: func(connector.BadRecord) error { return nil },
			}
			if err := c.Open(context.Background()); err != nil {
				t.Fatal(err)
			}
			in := optest.Batch(tc.rows...)
			in.Origin = tc.origin
			if err := c.Process(in, &optest.Out{}); err != nil {
				t.Fatal(err)
			}
			if got := c.ReleasesInput(); got != tc.want {
				t.Errorf("ReleasesInput %v, want %v", got, tc.want)
			}
		})
	}
}
