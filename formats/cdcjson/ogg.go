package cdcjson

import (
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// OggDecoder reads Oracle GoldenGate's JSON records:
//
//	{"table": "SCHEMA.T", "op_type": "I"|"U"|"D", "op_ts": "...",
//	 "current_ts": "...", "pos": "...", "before": {...}, "after": {...}}
//
// I gives +I(after), U -U(before) and +U(after), D -D(before). T (a
// truncate) and any other op_type are errors, as in Flink: a truncate
// names no rows to retract. It is not safe for concurrent use.
type OggDecoder struct {
	images
}

// NewOggDecoder returns a decoder of records whose row images have schema.
func NewOggDecoder(o Options, schema row.Schema) (*OggDecoder, error) {
	c, err := o.codec(schema)
	if err != nil {
		return nil, err
	}
	return &OggDecoder{images: images{codec: c}}, nil
}

var oggMembers = []string{"before", "after", "op_type"}

// Decode appends the changes of one record to b. On error it appends
// nothing.
func (d *OggDecoder) Decode(rec []byte, b *row.Batch) error {
	s := string(rec)
	if isTombstone(s) {
		return nil
	}
	var m [3]member
	if err := scanMessage(s, oggMembers, m[:]); err != nil {
		return &connector.DecodeError{Err: err}
	}
	op, err := readString(s, m[2])
	if err != nil {
		return malformed(`"op_type": %v`, err)
	}
	need := func(i int) (row.Row, error) {
		if m[i].nullOrAbsent(s) {
			if i == 0 && op != "D" {
				return nil, malformed(`op_type U without "before": the old row is needed to retract it ` +
					`(have GoldenGate write before images: the source's full supplemental logging, GETUPDATEBEFORES)`)
			}
			return nil, malformed("op_type %s needs %q, which is null or missing", op, oggMembers[i])
		}
		return d.image(b, s, m[i], `"`+oggMembers[i]+`"`)
	}
	switch op {
	case "I":
		after, err := need(1)
		if err != nil {
			return err
		}
		b.Append(row.Insert, after)
	case "U":
		before, err := need(0)
		if err != nil {
			return err
		}
		after, err := need(1)
		if err != nil {
			return err
		}
		b.Append(row.UpdateBefore, before)
		b.Append(row.UpdateAfter, after)
	case "D":
		before, err := need(0)
		if err != nil {
			return err
		}
		b.Append(row.Delete, before)
	case "":
		return malformed(`not a GoldenGate record: no "op_type" member`)
	case "T":
		return malformed(`op_type T (a truncate) at byte %d names no rows to delete, so it cannot be read as changes (want I, U or D)`, m[2].pos)
	default:
		return malformed(`unknown "op_type" value %q at byte %d (want I, U or D)`, op, m[2].pos)
	}
	return nil
}

var _ connector.Decoder = (*OggDecoder)(nil)
