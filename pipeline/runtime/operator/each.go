package operator

import "github.com/etld/etld/pipeline/row"

// EachChange calls f for every change of in, in order. Before change i,
// when in carries positions, it tells out that what f emits comes from
// that change, so that an error further down (or a dead-letter entry)
// names the source record. An error of f stops the walk and is returned
// naming the operator op, the change and its record (ChangeError).
//
// Operators whose loop over a batch does nothing but this use it instead
// of writing the bookkeeping themselves; the vectorized passes of an
// aggregate, which do not go change by change, do not.
func EachChange(op string, in *row.Batch, out Emitter, f func(i int, c *row.Change) error) error {
	tr := TrackerOf(in, out)
	for i := range in.Changes {
		if tr != nil {
			tr.At(i)
		}
		if err := f(i, &in.Changes[i]); err != nil {
			return ChangeError(op, in, i, err)
		}
	}
	return nil
}
