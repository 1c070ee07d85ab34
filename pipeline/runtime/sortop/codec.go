package sortop

import (
	"fmt"

	"github.com/etld/etld/pipeline/row"
)

// sortCodec encodes the rows a TimeSorted holds, per side: in a
// row.Layout of the types of the side's first row (no type byte and no
// varint a value: an integer id in its zig-zag varint, a TIMESTAMP in 8
// bytes, a string in its length and bytes), the time column left out
// (written NULL: the sort keeps each row's time beside it, and a row it
// holds never has a NULL time, so a NULL there reads back as that time).
// A row of another width, or whose time is not the side's type, keeps
// every value; a value of another type than its column's is tagged
// (Layout's own fallback): every row reads back identical. Why: at 10M
// rows the sort's bytes are fresh memory, each page of it a fault and
// the kernel's zeroing, and AppendRow's encoding took 23 bytes a row of
// M-over where this takes 12; a Layout also decodes with no type switch
// a value.
//
// An encoding starts with its form: encLayout, or encTagged for
// row.AppendRow's.
type sortCodec struct {
	col    [2]int
	lay    [2]*row.Layout
	timeID [2]row.TypeID
}

const (
	encTagged byte = iota
	encLayout
)

// appendRow appends the encoding of r (of side, its time ts) to dst.
func (c *sortCodec) appendRow(dst []byte, side int, ts int64, r row.Row) []byte {
	lay, col := c.lay[side], c.col[side]
	if lay == nil {
		ids := make([]row.TypeID, len(r))
		for i, v := range r {
			ids[i] = v.Type()
		}
		lay = row.NewLayout(ids)
		c.lay[side], c.timeID[side] = lay, r[col].Type()
	}
	if len(r) != lay.Width() {
		return row.AppendRow(append(dst, encTagged), r)
	}
	skip := -1
	if r[col] == c.timeValue(side, ts) {
		skip = col
	}
	return lay.AppendWithout(append(dst, encLayout), r, skip)
}

// timeValue is the time column's value of side at ts.
func (c *sortCodec) timeValue(side int, ts int64) row.Value {
	if c.timeID[side] == row.TimestampLTZ {
		return row.TimestampLTZValue(ts)
	}
	return row.TimestampValue(ts)
}

// decodeRow decodes enc (appendRow's, of side, its time ts) into dst,
// grown to the row's width, and returns it. Strings are copied into
// text, or with text nil alias enc (for a caller done with the row
// before enc changes).
func (c *sortCodec) decodeRow(dst row.Row, side int, ts int64, enc []byte, text *row.Text) (row.Row, error) {
	if len(enc) > 0 && enc[0] == encLayout && c.lay[side] != nil {
		lay := c.lay[side]
		if cap(dst) < lay.Width() {
			dst = make(row.Row, lay.Width())
		}
		dst = dst[:lay.Width()]
		lay.Decode(dst, enc[1:], text)
		if col := c.col[side]; dst[col].IsNull() {
			dst[col] = c.timeValue(side, ts)
		}
		return dst, nil
	}
	if len(enc) == 0 || enc[0] != encTagged {
		return dst, fmt.Errorf("time sort: a row of an unknown form")
	}
	d := row.NewDecoder(enc[1:])
	n := d.Count(1)
	if cap(dst) < n {
		dst = make(row.Row, n)
	}
	dst = dst[:n]
	for i := range dst {
		dst[i] = d.Value()
	}
	if err := d.Err(); err != nil {
		return dst, fmt.Errorf("time sort: %w", err)
	}
	return dst, nil
}
