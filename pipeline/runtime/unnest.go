package runtime

import (
	"fmt"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/runtime/operator"
)

// Unnest is `input CROSS JOIN UNNEST(x)`: each input row joined with every
// element of its ARRAY x (or entry of its MAP x), a lateral correlate per
// row as Flink's. It keeps no state, and each output row carries the kind
// of the row it came from, so an update of the input row retracts and adds
// the rows of its old and new elements. A row whose x is NULL or empty
// joins nothing (CROSS JOIN), or, Left (LEFT JOIN ... ON TRUE), is kept
// once with NULL element columns (ORDINALITY NULL too), as Flink's
// correlate pads it.
type Unnest struct {
	// Of computes x from the input row.
	Of func(r row.Row) (row.Value, error)
	// Map says x is a MAP: each entry gives two columns, key and value.
	Map bool
	// Fields > 0 says x's elements are ROWs of that many fields, each a
	// column of its own, as Flink expands them; 0 gives the element as
	// one column.
	Fields int
	// Ordinality appends the element's position, from 1 (WITH
	// ORDINALITY).
	Ordinality bool
	// Left keeps the rows without elements.
	Left bool
	// Reject, Input, Name and Transform are as Calc's.
	Reject    func(connector.BadRecord) error
	Input     row.Schema
	Name      string
	Transform string
}

// width is the number of columns each element adds.
func (u *Unnest) width() int {
	w := 1
	switch {
	case u.Map:
		w = 2
	case u.Fields > 0:
		w = u.Fields
	}
	if u.Ordinality {
		w++
	}
	return w
}

// Process implements Operator.
func (u *Unnest) Process(in *row.Batch, out operator.Emitter) error {
	tr := operator.TrackerOf(in, out)
	w := u.width()
	for i, ch := range in.Changes {
		if tr != nil {
			tr.At(i)
		}
		x, err := u.Of(ch.Row)
		if err != nil {
			bad := rowRecord(in, i, u.Transform, u.Input, ch.Row, err)
			if u.Reject == nil {
				return fmt.Errorf("%w (row %s)", bad, row.Change{Kind: row.Insert, Row: ch.Row})
			}
			if err := u.Reject(bad); err != nil {
				return err
			}
			continue
		}
		n := len(ch.Row)
		if x.IsNull() || x.Len() == 0 {
			if u.Left {
				r := make(row.Row, n+w)
				copy(r, ch.Row)
				for k := n; k < n+w; k++ {
					r[k] = row.NullValue
				}
				out.Emit(ch.Kind, r)
			}
			continue
		}
		var key row.Value
		for j, item := range x.Items() {
			if u.Map && j%2 == 0 {
				key = item
				continue
			}
			r := make(row.Row, n, n+w)
			copy(r, ch.Row)
			switch {
			case u.Map:
				r = append(r, key, item)
			case u.Fields > 0:
				for k := range u.Fields {
					f, _ := item.Item(k) // a NULL element gives NULL fields
					r = append(r, f)
				}
			default:
				r = append(r, item)
			}
			if u.Ordinality {
				pos := j + 1
				if u.Map {
					pos = j/2 + 1
				}
				r = append(r, row.IntValue(int32(pos)))
			}
			out.Emit(ch.Kind, r)
		}
	}
	return nil
}

// Watermark implements Operator.
func (u *Unnest) Watermark(int64, operator.Emitter) error { return nil }

// Finish implements Operator.
func (u *Unnest) Finish(operator.Emitter) error { return nil }
