package sortop

import "github.com/etld/etld/pipeline/runtime/operator"

// SetSortBatch makes a TimeSorted (or TimeSortedJoin) feed n rows
// between watermarks, so that small inputs see many.
func SetSortBatch(op operator.Lifecycle, n int) {
	switch t := op.(type) {
	case *TimeSorted:
		t.batch = n
	case *TimeSortedJoin:
		t.batch = n
	}
}
