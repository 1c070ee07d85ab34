package udf

import (
	"fmt"

	"github.com/etld/etld/pipeline/row"
)

// Aggregate functions keep an accumulator per group: bytes the function
// makes and reads (empty for a new group), which etld stores, checkpoints
// and hands back. Their calls (docs/udf.md): accumulate and retract
// apply rows to accumulators (the batch's first argument column, an INT,
// says which accumulator each row applies to), merge folds one
// accumulator into another (window slices), result reads each
// accumulator's value. An aggregate function's failure fails the
// pipeline: a group whose state skipped a row would disagree with the
// rows it counts.

var bytesType = row.Of(row.Bytes)

// AggUpdate implements Instance: it applies rows to accumulators in
// order (add[i] false retracts row i); args[k] are the rows' values of
// parameter k, group[i] the accumulator row i applies to. It returns the
// accumulators and their results: the last call of a run of rows asks
// for the results of the accumulators it changed, and the accumulators
// no call of the last run changed are asked for theirs after.
func (i *wasmInstance) AggUpdate(accs [][]byte, group []int, args [][]row.Value, add []bool) ([][]byte, []row.Value, error) {
	out := append([][]byte(nil), accs...)
	res := make([]row.Value, len(accs))
	have := make([]bool, len(accs))
	for lo := 0; lo < len(group); {
		hi := lo + 1
		for hi < len(group) && add[hi] == add[lo] && hi-lo < chunkRows {
			hi++
		}
		kind := KindAccumulate
		if !add[lo] {
			kind = KindRetract
		}
		if err := i.aggRun(kind, out, res, have, group[lo:hi], args, lo, hi); err != nil {
			return nil, nil, err
		}
		lo = hi
	}
	var missing []int
	for g, ok := range have {
		if !ok {
			missing = append(missing, g)
		}
	}
	if len(missing) > 0 {
		sub := make([][]byte, len(missing))
		for j, g := range missing {
			sub[j] = out[g]
		}
		vals, err := i.AggResult(sub)
		if err != nil {
			return nil, nil, err
		}
		for j, g := range missing {
			res[g] = vals[j]
		}
	}
	return out, res, nil
}

// aggRun applies rows lo..hi (all accumulated, or all retracted) to the
// accumulators they name in accs, in place: the call carries those
// accumulators only, and gives their results too (res, have: set for
// the accumulators changed, cleared when a later run changes them).
func (i *wasmInstance) aggRun(kind int, accs [][]byte, res []row.Value, have []bool, group []int, args [][]row.Value, lo, hi int) error {
	local := map[int]int{}
	var ids []int
	groupCol := make([]row.Value, len(group))
	for j, g := range group {
		l, ok := local[g]
		if !ok {
			l = len(ids)
			local[g] = l
			ids = append(ids, g)
		}
		groupCol[j] = row.IntValue(int32(l))
	}
	states := make([]row.Value, len(ids))
	for l, g := range ids {
		states[l] = row.BytesValue(accs[g])
	}
	if err := i.enc.header(kind, hi-lo, 1+len(args), []row.Type{bytesType, i.w.fn.Returns}); err != nil {
		return err
	}
	i.states(states)
	if err := i.enc.column(row.Of(row.Int), groupCol); err != nil {
		return err
	}
	if err := i.encodeColumns(args, lo, hi); err != nil {
		return err
	}
	out, err := i.aggCall(len(ids), bytesType, i.w.fn.Returns)
	if err != nil {
		return err
	}
	for l, g := range ids {
		accs[g], res[g], have[g] = []byte(out[0][l].Str()), out[1][l], true
	}
	return nil
}

// states writes the accumulators section of an aggregate's batch.
func (i *wasmInstance) states(states []row.Value) {
	i.enc.u32(len(states))
	_ = i.enc.column(bytesType, states)
}

// aggCall calls the function with the batch in i.enc and reads a column
// of n values back for each of types; any failure is the call's.
func (i *wasmInstance) aggCall(n int, types ...row.Type) ([][]row.Value, error) {
	view, err := i.call()
	if err != nil {
		return nil, err
	}
	d := &decoder{buf: view}
	if cnt := d.u32(); cnt != n && d.err == nil {
		return nil, fmt.Errorf("returned %d values for %d accumulators", cnt, n)
	}
	errs := make([]error, n)
	d.rowErrors(errs, 0, n)
	out := make([][]row.Value, len(types))
	for k, t := range types {
		out[k] = make([]row.Value, n)
		d.column(t, out[k])
	}
	if d.err != nil {
		return nil, d.err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// AggMerge implements Instance: others[j] folded into accs[j].
func (i *wasmInstance) AggMerge(accs, others [][]byte) ([][]byte, error) {
	var out [][]byte
	for lo := 0; lo < len(accs); lo += chunkRows {
		hi := min(lo+chunkRows, len(accs))
		if err := i.enc.header(KindMerge, hi-lo, 1, []row.Type{bytesType}); err != nil {
			return nil, err
		}
		i.states(bytesValues(accs[lo:hi]))
		_ = i.enc.column(bytesType, bytesValues(others[lo:hi]))
		res, err := i.aggCall(hi-lo, bytesType)
		if err != nil {
			return nil, err
		}
		for _, v := range res[0] {
			out = append(out, []byte(v.Str()))
		}
	}
	return out, nil
}

// AggResult implements Instance: each accumulator's value.
func (i *wasmInstance) AggResult(accs [][]byte) ([]row.Value, error) {
	var out []row.Value
	for lo := 0; lo < len(accs); lo += chunkRows {
		hi := min(lo+chunkRows, len(accs))
		if err := i.enc.header(KindResult, hi-lo, 0, []row.Type{i.w.fn.Returns}); err != nil {
			return nil, err
		}
		i.states(bytesValues(accs[lo:hi]))
		res, err := i.aggCall(hi-lo, i.w.fn.Returns)
		if err != nil {
			return nil, err
		}
		out = append(out, res[0]...)
	}
	return out, nil
}

func bytesValues(bs [][]byte) []row.Value {
	out := make([]row.Value, len(bs))
	for i, b := range bs {
		out[i] = row.BytesValue(b)
	}
	return out
}
