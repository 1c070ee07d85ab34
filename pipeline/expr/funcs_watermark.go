package expr

import (
	"math"
	"sync/atomic"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// CURRENT_WATERMARK(rowtime) of Flink 2.3: the watermark the operator
// evaluating it has seen, of the rowtime column's type, NULL before the
// first. Flink evaluates it record by record, between the watermarks
// that pass; so does etld: the operator sets the Watermark it was
// compiled with (WithWatermark) as each watermark passes, and evaluates
// its rows in order on one goroutine (Compiled.Sequential), its sources
// sending a watermark wherever it rises (runtime: Calc.Watermarks).

func init() {
	register(map[string]*funcDef{
		"CURRENT_WATERMARK": {min: 1, max: 1, build: buildCurrentWatermark},
	})
}

// NoWatermark is the watermark before the first: CURRENT_WATERMARK is
// NULL.
const NoWatermark = math.MinInt64

// Watermark is the watermark an operator has seen, in microseconds, for
// the CURRENT_WATERMARK calls of its expressions. Set and the calls'
// reads may run on different goroutines.
type Watermark struct{ v atomic.Int64 }

// NewWatermark returns a Watermark at NoWatermark.
func NewWatermark() *Watermark {
	w := &Watermark{}
	w.v.Store(NoWatermark)
	return w
}

// Set records the watermark wm (microseconds; NoWatermark for none).
func (w *Watermark) Set(wm int64) { w.v.Store(wm) }

// WithWatermark makes CURRENT_WATERMARK read w. Without it the call is
// NULL: an expression compiled to be checked, not run.
func WithWatermark(w *Watermark) Option {
	return func(c *compiler) { c.watermark = w }
}

// buildCurrentWatermark is CURRENT_WATERMARK(ts): ts must be a TIMESTAMP
// or TIMESTAMP_LTZ column of precision at most 3, the table's event
// time as Flink requires (the planner checks that it is a time
// attribute: an ordinary column passes here). The result has its type,
// nullable; the argument is only its type, never evaluated.
func buildCurrentWatermark(c *compiler, e *sql.Call, args []*node) (*node, error) {
	a := args[0]
	if !isTimestamp(a.t.ID) || a.t.Precision > 3 {
		return nil, errAt(a.e.Pos(), "CURRENT_WATERMARK needs the table's event-time column (a TIMESTAMP(3) or TIMESTAMP_LTZ(3) with a WATERMARK), not %s", typeName(a.t))
	}
	if a.col < 0 {
		return nil, errAt(a.e.Pos(), "CURRENT_WATERMARK needs the table's event-time column itself, not an expression")
	}
	t := a.t.Nullable()
	id := t.ID
	c.sequential(e)
	c.readsWatermark = true
	c.watermarkOf = append(c.watermarkOf, a.col)
	w := c.watermark
	return c.volatile(e, t, func(row.Row) (row.Value, error) {
		if w == nil {
			return row.NullValue, nil
		}
		wm := w.v.Load()
		if wm == NoWatermark {
			return row.NullValue, nil
		}
		// A watermark is in milliseconds in Flink: the one before the
		// first row's is Long.MIN_VALUE, not a time, and reads as NULL.
		if id == row.TimestampLTZ {
			return row.TimestampLTZValue(wm), nil
		}
		return row.TimestampValue(wm), nil
	}), nil
}

// Fresh returns c compiled again for one run of its operator when its
// value depends on the rows before (Sequential): with a generator of its
// own for a seeded RAND, and reading w for CURRENT_WATERMARK. Otherwise
// it returns c itself.
func (c *Compiled) Fresh(w *Watermark) (*Compiled, error) {
	if c == nil || c.Sequential == "" {
		return c, nil
	}
	opts := append(append([]Option(nil), c.opts...), WithWatermark(w))
	return compileWith(c.src, c.scope, opts, nil)
}
