package windowop

import "errors"

// errNullTime is eventTime's answer for a row whose event time is NULL
// (an outer join pads the other side's time attribute with NULL). What
// happens to the row is Flink's: a window table function (TUMBLE, HOP,
// CUMULATE, SESSION read as tables) and an OVER aggregate drop it and
// count it (numNullRowTimeRecordsDropped, a late row for OVER) and the
// job goes on; a window aggregate fails the job ("RowTime field should
// not be null"), and so does this one, with this error. A NULL time read
// from a source is the source's record error, before it gets here.
var errNullTime = errors.New("a row's event time is NULL (an outer join pads the time column of a row without a match): " +
	"a window aggregate cannot place it, and fails as Flink's does; keep such rows out of the window (WHERE the time column IS NOT NULL)")

// nullTimes counts the rows dropped for a NULL event time, beside an
// operator's late rows.
type nullTimes struct{ nulls int64 }

// skipNull reports whether err is a NULL event time, counting the row.
func (n *nullTimes) skipNull(err error) bool {
	if err == errNullTime {
		n.nulls++
		return true
	}
	return false
}

// droppedWith is Dropped's answer: the late rows and those without an
// event time, with the reasons that apply.
func (n *nullTimes) droppedWith(late int64) (int64, string) {
	switch {
	case n.nulls == 0:
		return late, "late"
	case late == 0:
		return n.nulls, "NULL event time"
	}
	return late + n.nulls, "late or NULL event time"
}
