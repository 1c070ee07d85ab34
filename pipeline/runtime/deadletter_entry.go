package runtime

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// A dead letter is one record a policy set aside, with where it came
// from and why. In a file it is a JSON object on a line of its own
// (null members left out, row an object); a sink receives it as a row of
// DeadLetterSchema (row as its JSON text).

// DeadLetterSchema is the schema of the rows a dead-letter sink receives.
var DeadLetterSchema = row.NewSchema(
	row.Field{Name: "id", Type: row.Type{ID: row.String, NotNull: true}},
	row.Field{Name: "pipeline", Type: row.Of(row.String)},
	row.Field{Name: "source", Type: row.Of(row.String)},
	row.Field{Name: "sink", Type: row.Of(row.String)},
	row.Field{Name: "transform", Type: row.Of(row.String)},
	row.Field{Name: "position", Type: row.Of(row.String)},
	row.Field{Name: "file", Type: row.Of(row.String)},
	row.Field{Name: "file_id", Type: row.Of(row.String)},
	row.Field{Name: "offset", Type: row.Of(row.BigInt)},
	row.Field{Name: "checkpoint", Type: row.Of(row.BigInt)},
	row.Field{Name: "error", Type: row.Of(row.String)},
	row.Field{Name: "record", Type: row.Of(row.String)},
	row.Field{Name: "record_base64", Type: row.Of(row.String)},
	row.Field{Name: "row", Type: row.Of(row.String)},
)

// DeadLetterKey is the column that identifies a dead letter: the same
// record set aside again (a restored run reading it again) has the same
// id, so that an upsert sink keyed by it holds each once.
const DeadLetterKey = "id"

// entry is a dead letter as a policy made it, on the rejecting node's
// goroutine.
type entry struct {
	kind, name string // "source" or "sink", and its name
	transform  string
	position   string
	loc        *row.Location
	checkpoint int64
	err        string
	// record is the raw record (raw set); rowJSON the row an expression
	// failed on, as a JSON object of named columns.
	record  []byte
	raw     bool
	rowJSON []byte
}

func newEntry(kind, name string, bad connector.BadRecord, checkpoint int64) *entry {
	e := &entry{kind: kind, name: name, transform: bad.Transform, position: bad.Position, loc: bad.Location, checkpoint: checkpoint}
	if bad.Err != nil {
		e.err = bad.Err.Error()
	}
	if bad.Row != nil {
		e.rowJSON = appendRowJSON(nil, bad.Columns, bad.Row)
	} else {
		e.record, e.raw = bad.Raw, true
	}
	return e
}

// id digests what identifies the entry the same in a restored run that
// sets the record aside again: where it came from and what it holds. Not
// its checkpoint, which a restored run numbers anew, nor the reason,
// which may name what differs from run to run (an id the target gave);
// nor, for a sink's row, its position, which names the row by where the
// batches were cut.
func (e *entry) id(pipeline string) string {
	h := sha256.New()
	var n [8]byte
	parts := []string{pipeline, e.kind, e.name, e.transform}
	if e.kind != "sink" {
		parts = append(parts, e.position)
	}
	for _, s := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	if e.loc != nil {
		h.Write([]byte(e.loc.ID))
		binary.BigEndian.PutUint64(n[:], uint64(e.loc.Offset))
		h.Write(n[:])
	}
	h.Write(e.record)
	h.Write(e.rowJSON)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// line is the entry as a line of a dead-letter file.
func (e *entry) line(pipeline string) ([]byte, error) {
	out := struct {
		ID           string          `json:"id"`
		Pipeline     string          `json:"pipeline,omitempty"`
		Source       string          `json:"source,omitempty"`
		Sink         string          `json:"sink,omitempty"`
		Transform    string          `json:"transform,omitempty"`
		Position     string          `json:"position"`
		File         string          `json:"file,omitempty"`
		FileID       string          `json:"file_id,omitempty"`
		Offset       *int64          `json:"offset,omitempty"`
		Checkpoint   int64           `json:"checkpoint"`
		Error        string          `json:"error"`
		Record       *string         `json:"record,omitempty"`
		RecordBase64 string          `json:"record_base64,omitempty"`
		Row          json.RawMessage `json:"row,omitempty"`
	}{ID: e.id(pipeline), Pipeline: pipeline, Transform: e.transform, Position: e.position, Checkpoint: e.checkpoint, Error: e.err, Row: e.rowJSON}
	// A transform's entry (a late row) names its transform only.
	switch e.kind {
	case "sink":
		out.Sink = e.name
	case "source":
		out.Source = e.name
	}
	if e.loc != nil {
		out.File, out.FileID, out.Offset = e.loc.File, e.loc.ID, &e.loc.Offset
	}
	if e.raw {
		text, b64 := e.recordText()
		if b64 != "" {
			out.RecordBase64 = b64
		} else {
			out.Record = &text
		}
	}
	line, err := json.Marshal(out)
	return append(line, '\n'), err
}

// recordText is the raw record as text, or, when it is not UTF-8 (which
// a JSON string cannot hold as it is), in base64.
func (e *entry) recordText() (text, b64 string) {
	if utf8.Valid(e.record) {
		return string(e.record), ""
	}
	return "", base64.StdEncoding.EncodeToString(e.record)
}

// row is the entry as a row of DeadLetterSchema.
func (e *entry) row(pipeline string) row.Row {
	str := func(s string) row.Value {
		if s == "" {
			return row.NullValue
		}
		return row.StringValue(s)
	}
	r := row.Row{row.StringValue(e.id(pipeline)), str(pipeline), row.NullValue, row.NullValue, str(e.transform), str(e.position),
		row.NullValue, row.NullValue, row.NullValue, row.BigIntValue(e.checkpoint), str(e.err), row.NullValue, row.NullValue, row.NullValue}
	switch e.kind {
	case "sink":
		r[3] = str(e.name)
	case "source":
		r[2] = str(e.name)
	}
	if e.loc != nil {
		r[6], r[7], r[8] = str(e.loc.File), str(e.loc.ID), row.BigIntValue(e.loc.Offset)
	}
	if e.raw {
		text, b64 := e.recordText()
		if b64 != "" {
			r[12] = row.StringValue(b64)
		} else {
			r[11] = row.StringValue(text)
		}
	}
	if e.rowJSON != nil {
		r[13] = row.StringValue(string(e.rowJSON))
	}
	return r
}

// appendRowJSON appends r as a JSON object of its named columns: numbers
// and booleans as JSON's, bytes in base64, other values as their SQL
// text (CAST(v AS STRING)).
func appendRowJSON(dst []byte, cols row.Schema, r row.Row) []byte {
	dst = append(dst, '{')
	for i, v := range r {
		if i > 0 {
			dst = append(dst, ',')
		}
		name := "$" + strconv.Itoa(i)
		t := row.Of(v.Type())
		if i < cols.Len() {
			name, t = cols.Fields[i].Name, cols.Fields[i].Type
		}
		dst = appendJSONString(dst, name)
		dst = append(dst, ':')
		dst = appendJSONValue(dst, v, t)
	}
	return append(dst, '}')
}

func appendJSONValue(dst []byte, v row.Value, t row.Type) []byte {
	switch v.Type() {
	case row.Null:
		return append(dst, "null"...)
	case row.Boolean:
		return strconv.AppendBool(dst, v.Bool())
	case row.Int, row.BigInt, row.Decimal:
		return row.AppendText(dst, v, t)
	case row.Float, row.Double:
		if f := v.Float64(); math.IsNaN(f) || math.IsInf(f, 0) {
			return appendJSONString(dst, string(row.AppendText(nil, v, t)))
		}
		return row.AppendText(dst, v, t)
	case row.Bytes:
		return appendJSONString(dst, base64.StdEncoding.EncodeToString([]byte(v.Str())))
	}
	return appendJSONString(dst, string(row.AppendText(nil, v, t)))
}

func appendJSONString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return append(dst, b...)
}
