// Package debezium is the debezium-json format: Debezium's change events
// as JSON, read into changelog rows and written as Flink writes them.
//
// Reading: {"before": {...}|null, "after": {...}|null, "op": "c"|"r"|"u"|"d",
// ...} or the same inside {"schema": ..., "payload": {...}} (Kafka Connect's
// JsonConverter with schemas enabled; the schema part is ignored), either
// shape unless schema_include says which. c and r
// give +I(after), u gives -U(before) and +U(after), d gives -D(before). A
// tombstone (an empty record, or null, which Debezium sends after a delete
// so that Kafka compaction can drop the key) gives no change. The row
// images are read as the json format reads objects.
//
// Writing, as Flink's debezium-json does: +I and +U become
// {"before":null,"after":{...},"op":"c"}, -U and -D become
// {"before":{...},"after":null,"op":"d"}; Flink never writes "u".
package debezium

import (
	"errors"
	"fmt"
	"strings"

	"github.com/etld/etld/formats/json"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Options are the debezium-json format's options.
type Options struct {
	// TimestampFormat is as the json format's: sql (default) or iso-8601.
	TimestampFormat string `yaml:"timestamp_format"`
	// SchemaInclude is Flink's debezium-json.schema-include: true says
	// every event comes in a {"schema": ..., "payload": ...} envelope
	// (Kafka Connect's JsonConverter with schemas.enable), false that none
	// does; an event of the other shape is then an error that says so.
	// Not given, either shape is read. Writing an envelope is refused, as
	// in Flink.
	SchemaInclude *bool `yaml:"schema_include"`
	// EncodeDecimalAsPlainNumber is as the json format's (Flink's
	// debezium-json.encode.decimal-as-plain-number).
	EncodeDecimalAsPlainNumber bool `yaml:"encode_decimal_as_plain_number"`
}

func (o Options) json() json.Options {
	return json.Options{TimestampFormat: o.TimestampFormat, EncodeDecimalAsPlainNumber: o.EncodeDecimalAsPlainNumber}
}

// Register adds the debezium-json format to r.
func Register(r *connector.Registry) {
	connector.RegisterFormat(r, "debezium-json", "Debezium change events as JSON: an updating changelog",
		func(o Options, s row.Schema) (connector.Decoder, error) { return NewDecoder(o, s) },
		func(o Options, s row.Schema) (connector.Encoder, error) { return NewEncoder(o, s) },
		connector.FormatChangelog)
}

// Decoder reads Debezium change events. It is not safe for concurrent use.
type Decoder struct {
	codec *json.Codec
	// schemaInclude: nil reads both shapes; otherwise whether the
	// envelope is required (true) or refused (false).
	schemaInclude *bool
}

// NewDecoder returns a decoder of events whose row images have schema.
func NewDecoder(o Options, schema row.Schema) (*Decoder, error) {
	c, err := json.NewCodec(schema, o.json())
	if err != nil {
		return nil, err
	}
	return &Decoder{codec: c, schemaInclude: o.SchemaInclude}, nil
}

// event holds the offsets of an envelope's members in the record; -1 when
// absent.
type event struct {
	before, after       int
	beforeEnd, afterEnd int
	op                  string
	opPos               int
	payload             int
}

// Decode appends the changes one event carries to b: none for a
// tombstone, one or two otherwise. On error it appends nothing.
func (d *Decoder) Decode(rec []byte, b *row.Batch) error {
	s := string(rec)
	i := json.SkipSpace(s, 0)
	if i == len(s) || (isNull(s, i) && json.SkipSpace(s, i+4) == len(s)) {
		return nil
	}
	ev, err := readEnvelope(s, i, true)
	if err != nil {
		return &connector.DecodeError{Err: err}
	}
	if want := d.schemaInclude; want != nil && *want != (ev.payload >= 0) {
		if *want {
			return &connector.DecodeError{Err: errors.New(`schema_include is true, but the event has no "payload" member: ` +
				`it is not in a {"schema", "payload"} envelope (set schema_include: false, or leave it out to read both shapes)`)}
		}
		return &connector.DecodeError{Err: errors.New(`the event is in a {"schema", "payload"} envelope (Kafka Connect's schemas.enable), ` +
			`and schema_include is false; set schema_include: true, or leave it out to read both shapes`)}
	}
	if ev.payload >= 0 {
		if isNull(s, ev.payload) {
			return nil // a tombstone in a schema envelope
		}
		if ev, err = readEnvelope(s, ev.payload, false); err != nil {
			return &connector.DecodeError{Err: fmt.Errorf("in \"payload\": %w", err)}
		}
	}
	image := func(name string, pos int) (row.Row, error) {
		if pos < 0 || isNull(s, pos) {
			return nil, &connector.DecodeError{Err: fmt.Errorf("op %q needs %q, which is null or missing", ev.op, name)}
		}
		end := ev.afterEnd
		if name == "before" {
			end = ev.beforeEnd
		}
		img := s[pos:end]
		if len(img)*2 < len(s) {
			// The row's strings point into what they were decoded from;
			// copying the image lets the rest of the event (a schema
			// envelope is often most of it) be collected while the row
			// lives on in an aggregate's state.
			img = strings.Clone(img)
		}
		r := b.NewRow()
		if _, err := d.codec.DecodeObject(img, 0, r); err != nil {
			var de *connector.DecodeError
			if errors.As(err, &de) {
				return nil, &connector.DecodeError{Column: de.Column, Err: fmt.Errorf("in %q: %w", name, de.Err)}
			}
			return nil, err
		}
		return r, nil
	}
	switch ev.op {
	case "c", "r":
		after, err := image("after", ev.after)
		if err != nil {
			return err
		}
		b.Append(row.Insert, after)
	case "u":
		if ev.before < 0 || isNull(s, ev.before) {
			return &connector.DecodeError{Err: errors.New(`update event without "before": the old row is needed to retract it ` +
				`(for PostgreSQL, set the table's REPLICA IDENTITY to FULL)`)}
		}
		before, err := image("before", ev.before)
		if err != nil {
			return err
		}
		after, err := image("after", ev.after)
		if err != nil {
			return err
		}
		b.Append(row.UpdateBefore, before)
		b.Append(row.UpdateAfter, after)
	case "d":
		before, err := image("before", ev.before)
		if err != nil {
			return err
		}
		b.Append(row.Delete, before)
	case "":
		return &connector.DecodeError{Err: errors.New(`not a Debezium event: no "op" member`)}
	default:
		return &connector.DecodeError{Err: fmt.Errorf(`unknown "op" value %q at byte %d (want c, r, u or d)`, ev.op, ev.opPos)}
	}
	return nil
}

// isNull reports whether the value at s[i] is the literal null.
func isNull(s string, i int) bool {
	return strings.HasPrefix(s[i:], "null") && (i+4 == len(s) || !isLetter(s[i+4]))
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// readEnvelope walks the object at s[i] and notes where its members are.
// top allows a "payload" member and requires nothing to follow the object.
func readEnvelope(s string, i int, top bool) (event, error) {
	ev := event{before: -1, after: -1, opPos: -1, payload: -1}
	end, err := json.WalkObject(s, i, func(key string, _, v int) (int, error) {
		switch key {
		case "before":
			end, err := json.SkipValue(s, v)
			ev.before, ev.beforeEnd = v, end
			return end, err
		case "after":
			end, err := json.SkipValue(s, v)
			ev.after, ev.afterEnd = v, end
			return end, err
		case "op":
			if isNull(s, v) {
				break
			}
			op, end, err := json.ReadString(s, v)
			ev.op, ev.opPos = op, v
			return end, err
		case "payload":
			if top {
				ev.payload = v
			}
		}
		return json.SkipValue(s, v)
	})
	if err == nil && top {
		if end = json.SkipSpace(s, end); end < len(s) {
			err = &json.SyntaxError{Offset: end, Msg: "unexpected data after the event"}
		}
	}
	return ev, err
}

// Encoder writes changes as Flink's debezium-json does, one event and a
// newline per change.
type Encoder struct {
	codec *json.Codec
}

// NewEncoder returns an encoder of rows of schema.
func NewEncoder(o Options, schema row.Schema) (*Encoder, error) {
	if o.SchemaInclude != nil && *o.SchemaInclude {
		return nil, connector.Errorf("schema_include", "is for reading only: debezium-json writes events without a schema envelope, as Flink does (it refuses schema-include for writing too); remove it from the sink's format")
	}
	c, err := json.NewCodec(schema, o.json())
	if err != nil {
		return nil, err
	}
	return &Encoder{codec: c}, nil
}

// Encode appends the event for one change.
func (e *Encoder) Encode(dst []byte, k row.Kind, r row.Row) ([]byte, error) {
	if n := e.codec.Width(); len(r) != n {
		return dst, fmt.Errorf("debezium-json: row has %d values, schema has %d columns", len(r), n)
	}
	if k.IsAdd() {
		dst = append(dst, `{"before":null,"after":`...)
		dst = e.codec.AppendObject(dst, r)
		dst = append(dst, `,"op":"c"}`...)
	} else {
		dst = append(dst, `{"before":`...)
		dst = e.codec.AppendObject(dst, r)
		dst = append(dst, `,"after":null,"op":"d"}`...)
	}
	return append(dst, '\n'), nil
}

var (
	_ connector.Decoder = (*Decoder)(nil)
	_ connector.Encoder = (*Encoder)(nil)
)
