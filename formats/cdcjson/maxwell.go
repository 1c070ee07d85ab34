package cdcjson

import (
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// MaxwellDecoder reads Maxwell's JSON messages:
//
//	{"database": "db", "table": "t", "type": "insert"|"update"|"delete",
//	 "ts": 1477053217, "data": {...}, "old": {...}}
//
// insert gives +I(data), delete -D(data), update -U of the row before
// and +U(data); the row before is "data" with the members of "old" (the
// columns the update changed) put back. Any other type is an error, as in
// Flink. It is not safe for concurrent use.
type MaxwellDecoder struct {
	images
}

// NewMaxwellDecoder returns a decoder of messages whose rows have schema.
func NewMaxwellDecoder(o Options, schema row.Schema) (*MaxwellDecoder, error) {
	c, err := o.codec(schema)
	if err != nil {
		return nil, err
	}
	return &MaxwellDecoder{images: images{codec: c}}, nil
}

var maxwellMembers = []string{"data", "old", "type"}

// Decode appends the changes of one message to b. On error it appends
// nothing.
func (d *MaxwellDecoder) Decode(rec []byte, b *row.Batch) error {
	s := string(rec)
	if isTombstone(s) {
		return nil
	}
	var m [3]member
	if err := scanMessage(s, maxwellMembers, m[:]); err != nil {
		return &connector.DecodeError{Err: err}
	}
	typ, err := readString(s, m[2])
	if err != nil {
		return malformed(`"type": %v`, err)
	}
	switch typ {
	case "insert", "update", "delete":
	case "":
		return malformed(`not a Maxwell message: no "type" member`)
	default:
		return malformed(`unknown "type" value %q at byte %d (want insert, update or delete)`, typ, m[2].pos)
	}
	if m[0].nullOrAbsent(s) {
		return malformed(`type %s needs the row in "data", which is null or missing`, typ)
	}
	r, err := d.image(b, s, m[0], `"data"`)
	if err != nil {
		return err
	}
	switch typ {
	case "insert":
		b.Append(row.Insert, r)
	case "delete":
		b.Append(row.Delete, r)
	case "update":
		if m[1].nullOrAbsent(s) {
			return malformed(`type update needs the old values in "old", which is null or missing`)
		}
		before, err := d.before(b, s, m[1], r, `"old"`)
		if err != nil {
			return err
		}
		b.Append(row.UpdateBefore, before)
		b.Append(row.UpdateAfter, r)
	}
	return nil
}

var _ connector.Decoder = (*MaxwellDecoder)(nil)
