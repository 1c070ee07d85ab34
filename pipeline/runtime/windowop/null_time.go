package windowop

import "errors"

// errNullTime is eventTime's answer for a row whose event time is NULL.
// Such a row belongs to no window: an outer join pads the other side's
// time attribute with NULL, and Flink's window operators drop the row
// and count it (numNullRowTimeRecordsDropped) rather than fail the job;
// the window operators here do the same, counting it in Dropped. A NULL
// time read from a source is the source's record error, before it gets
// here.
var errNullTime = errors.New("event time is NULL")

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
