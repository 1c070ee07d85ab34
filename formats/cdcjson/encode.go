package cdcjson

import (
	"fmt"

	"github.com/etld/etld/formats/json"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// shape is how one format wraps a row image: the text before and after
// the image, for an added row (+I, +U) and for a removed one (-U, -D).
type shape struct {
	name                    string
	addOpen, addClose       string
	removeOpen, removeClose string
}

// As Flink writes them: an update becomes a delete of the old row and an
// insert of the new one (Flink never writes UPDATE, update or U, since
// the two halves of an update reach the writer one at a time).
var (
	canalEvent = shape{name: "canal-json",
		addOpen: `{"data":[`, addClose: `],"type":"INSERT"}`,
		removeOpen: `{"data":[`, removeClose: `],"type":"DELETE"}`}
	maxwellEvent = shape{name: "maxwell-json",
		addOpen: `{"data":`, addClose: `,"type":"insert"}`,
		removeOpen: `{"data":`, removeClose: `,"type":"delete"}`}
	oggEvent = shape{name: "ogg-json",
		addOpen: `{"before":null,"after":`, addClose: `,"op_type":"I"}`,
		removeOpen: `{"before":`, removeClose: `,"after":null,"op_type":"D"}`}
)

// Encoder writes changes as Flink's canal-json, maxwell-json or ogg-json
// writes them, one message and a newline per change.
type Encoder struct {
	codec *json.Codec
	shape shape
}

func newEncoder(o Options, schema row.Schema, sh shape) (*Encoder, error) {
	c, err := o.codec(schema)
	if err != nil {
		return nil, err
	}
	return &Encoder{codec: c, shape: sh}, nil
}

// Encode appends the message for one change.
func (e *Encoder) Encode(dst []byte, k row.Kind, r row.Row) ([]byte, error) {
	if n := e.codec.Width(); len(r) != n {
		return dst, fmt.Errorf("%s: row has %d values, schema has %d columns", e.shape.name, len(r), n)
	}
	if k.IsAdd() {
		dst = append(dst, e.shape.addOpen...)
		dst = e.codec.AppendObject(dst, r)
		dst = append(dst, e.shape.addClose...)
	} else {
		dst = append(dst, e.shape.removeOpen...)
		dst = e.codec.AppendObject(dst, r)
		dst = append(dst, e.shape.removeClose...)
	}
	return append(dst, '\n'), nil
}

var _ connector.Encoder = (*Encoder)(nil)
