package udf

import (
	"errors"
	"fmt"
)

// Agg is an aggregate function: an accumulator per group, bytes of the
// function's own making (empty for a new group; etld keeps it in its
// state and checkpoints it). Accumulate and Retract apply one row's
// arguments to an accumulator and return it (they may change acc in
// place and return it, which allocates nothing); Merge folds other into
// acc (window slices); Result appends the accumulator's value to out
// (out.Float64(x), out.AppendNull(), ...). Retract may be nil for a
// function that cannot retract (an updating input then fails the
// pipeline); Merge may be nil if the function is never used in a window
// whose slices merge (HOP, CUMULATE, SESSION).
type Agg struct {
	Accumulate func(acc []byte, row Args) ([]byte, error)
	Retract    func(acc []byte, row Args) ([]byte, error)
	Merge      func(acc, other []byte) ([]byte, error)
	Result     func(acc []byte, out *Builder) error
}

// Args is one row's arguments, read in place: Float64(k) is argument k
// as Column.Float64 reads it, and so on.
type Args struct {
	cols []*Column
	i    int
}

// Len is the number of arguments.
func (a Args) Len() int { return len(a.cols) }

// Col is argument k's column (Col(k).Value(a.Row()) for any type).
func (a Args) Col(k int) *Column { return a.cols[k] }

// Row is the row's index in the columns.
func (a Args) Row() int { return a.i }

func (a Args) IsNull(k int) bool             { return a.cols[k].IsNull(a.i) }
func (a Args) Bool(k int) bool               { return a.cols[k].Bool(a.i) }
func (a Args) Int32(k int) int32             { return a.cols[k].Int32(a.i) }
func (a Args) Int64(k int) int64             { return a.cols[k].Int64(a.i) }
func (a Args) Float64(k int) float64         { return a.cols[k].Float64(a.i) }
func (a Args) String(k int) string           { return a.cols[k].String(a.i) }
func (a Args) Bytes(k int) []byte            { return a.cols[k].Bytes(a.i) }
func (a Args) Value(k int) any               { return a.cols[k].Value(a.i) }
func (a Args) Decimal(k int) (uint64, int64) { return a.cols[k].Decimal(a.i) }

// accs holds the accumulators of the current call, copied out of the
// batch into arena (a function may grow one in place).
var (
	accs  [][]byte
	arena []byte
)

// AggregateBytes runs one call of an aggregate function over a batch's
// bytes and returns its output's.
func AggregateBytes(in []byte, f Agg) []byte {
	b, err := ReadBatch(in)
	if err != nil {
		return failAll(err)
	}
	if b.Kind < KindAccumulate || b.Kind > KindResult || b.States == nil || len(b.Results) < 1 || len(b.Results) > 2 {
		return failAll(fmt.Errorf("etld udf: an aggregate function called for kind %d", b.Kind))
	}
	arena = arena[:0]
	for g := range b.Groups {
		arena = append(arena, b.States.Bytes(g)...)
	}
	accs = accs[:0]
	at := 0
	for g := range b.Groups {
		n := len(b.States.Bytes(g))
		accs = append(accs, arena[at:at+n:at+n])
		at += n
	}
	res := newResult(b.Results)
	switch b.Kind {
	case KindAccumulate, KindRetract:
		step := f.Accumulate
		if b.Kind == KindRetract {
			step = f.Retract
		}
		if step == nil || len(b.Args) == 0 {
			return failAll(errors.New("etld udf: the function cannot retract"))
		}
		group := b.Args[0]
		row := Args{cols: b.Args[1:]}
		for i := range b.Rows {
			g := int(group.Int32(i))
			if g < 0 || g >= len(accs) {
				return failAll(fmt.Errorf("etld udf: row %d names accumulator %d of %d", i, g, len(accs)))
			}
			row.i = i
			if accs[g], err = step(accs[g], row); err != nil {
				return failAll(err)
			}
		}
	case KindMerge:
		if f.Merge == nil || len(b.Args) != 1 {
			return failAll(errors.New("etld udf: the function cannot merge"))
		}
		for g := range accs {
			if accs[g], err = f.Merge(accs[g], b.Args[0].Bytes(g)); err != nil {
				return failAll(err)
			}
		}
	case KindResult:
		return results(res, 0, f)
	}
	for _, acc := range accs {
		res.cols[0].Bytes(acc)
	}
	if len(res.cols) == 2 {
		// etld asks for the accumulators' results too, in a second
		// column: one call per change of a streaming aggregate.
		return results(res, 1, f)
	}
	return res.bytes(len(accs))
}

// results appends each accumulator's result to column k of res and
// returns the output.
func results(res *Result, k int, f Agg) []byte {
	out := res.cols[k]
	for _, acc := range accs {
		before := out.Len()
		if err := f.Result(acc, out); err != nil {
			return failAll(err)
		}
		if out.Len() != before+1 {
			return failAll(fmt.Errorf("etld udf: a result appended %d values, not 1", out.Len()-before))
		}
	}
	if err := out.firstErr(); err != nil {
		return failAll(err)
	}
	return res.bytes(len(accs))
}
