package avro

import (
	"errors"
	"fmt"
	"time"

	"github.com/hamba/avro/v2"

	"github.com/etld/etld/formats/confluent"
	"github.com/etld/etld/internal/schemaregistry"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// RegistryOptions are the options of avro-confluent and
// debezium-avro-confluent (Flink's avro-confluent.* options).
type RegistryOptions struct {
	// URL is the registry's Confluent API, such as http://registry:8081.
	URL string `yaml:"url,required"`
	// Subject is the subject the writer registers its schema under; not
	// given, a Kafka sink's <topic>-value (or -key for its key), as
	// Confluent's TopicNameStrategy names it.
	Subject string `yaml:"subject"`
	// Schema is the writer's Avro schema (JSON); not given, the one
	// derived from the table. The reader always reads with each record's
	// own writer schema, resolved against the table.
	Schema string `yaml:"schema"`
	// AutoRegister: the writer registers its schema under the subject
	// (default true, as Flink does); false only checks that the subject
	// has it, and fails otherwise.
	AutoRegister *bool `yaml:"auto_register"`
	// BasicAuthUserInfo is user:password for basic authentication
	// (Flink's basic-auth.user-info); BearerToken a bearer token. Give
	// them from ${VAR}s.
	BasicAuthUserInfo string `yaml:"basic_auth_user_info"`
	BearerToken       string `yaml:"bearer_token"`
	// Timeout bounds how long a record waits for the registry, retries
	// included, before the run fails (default 30s).
	Timeout time.Duration `yaml:"timeout"`
}

func (o RegistryOptions) confluent() confluent.Options {
	return confluent.Options{URL: o.URL, Subject: o.Subject, AutoRegister: o.AutoRegister,
		BasicAuthUserInfo: o.BasicAuthUserInfo, BearerToken: o.BearerToken, Timeout: o.Timeout}
}

// RegistryDecoder reads avro-confluent or debezium-avro-confluent. It is
// not safe for concurrent use; Clone gives another.
type RegistryDecoder struct {
	table
	opts     RegistryOptions
	reg      *confluent.Registry
	envelope bool
	// progs are the compiled programs by writer schema id; a refused
	// schema is cached as its error, so that its records fail at once.
	progs map[int]*program
	// last is the id last decoded and its program, which a topic's
	// records mostly share.
	lastID   int
	lastProg *program
	// r reads each record, its buffers reused.
	r reader
}

// program is a writer schema compiled against the table.
type program struct {
	rec *recordDec   // the row's record (avro-confluent)
	env *envelopeDec // debezium-avro-confluent
	err error
}

// NewRegistryDecoder returns a decoder of framed records into rows of
// schema; envelope reads Debezium's change events. It makes no request:
// a schema is looked up when a record first names its id.
func NewRegistryDecoder(o RegistryOptions, schema row.Schema, envelope bool) (*RegistryDecoder, error) {
	reg, err := confluent.New(o.confluent())
	if err != nil {
		return nil, err
	}
	d := &RegistryDecoder{table: table{columns: schema.Fields}, opts: o, reg: reg, envelope: envelope, progs: map[int]*program{}}
	if o.Schema != "" {
		// Only the writer uses it; a reader checks it fits the table.
		w, _, err := writerSchema(o.Schema, schema.Fields)
		if err != nil {
			return nil, err
		}
		if p := d.compile(w); p.err != nil {
			return nil, connector.Errorf("schema", "%v", p.err)
		}
	}
	return d, nil
}

func (d *RegistryDecoder) compile(w avro.Schema) *program {
	p := &program{}
	if d.envelope {
		p.env, p.err = compileEnvelope(w, d.columns, d.at)
	} else {
		p.rec, p.err = compileRecord(w, d.columns, d.at)
	}
	return p
}

// program returns the compiled program of a writer schema id, looking the
// schema up once.
func (d *RegistryDecoder) program(id int) (*program, error) {
	if d.lastProg != nil && d.lastID == id {
		return d.lastProg, nil
	}
	if p, ok := d.progs[id]; ok {
		d.lastID, d.lastProg = id, p
		return p, nil
	}
	s, err := d.reg.SchemaByID(id)
	if err != nil {
		var ue *connector.UnavailableError
		if errors.As(err, &ue) {
			return nil, err // not cached: the next record asks again
		}
		p := &program{err: err}
		d.progs[id] = p
		return p, nil
	}
	p := &program{}
	if s.Type != "" && s.Type != "AVRO" {
		p.err = fmt.Errorf("schema id %d is a %s schema, not Avro", id, s.Type)
	} else if w, err := Parse(s.Text); err != nil {
		p.err = fmt.Errorf("schema id %d: %w", id, err)
	} else if p = d.compile(w); p.err != nil {
		p.err = fmt.Errorf("the writer's schema id %d does not fit the table: %w", id, p.err)
	}
	d.progs[id] = p
	return p, nil
}

// Decode appends the changes of one framed record to b: one row, or for
// debezium-avro-confluent what the event says (none for a tombstone).
func (d *RegistryDecoder) Decode(rec []byte, b *row.Batch) error {
	if len(rec) == 0 {
		if d.envelope {
			return nil // a tombstone after a delete
		}
		return &connector.DecodeError{Err: errors.New("an empty record")}
	}
	id, err := confluent.FrameID(rec)
	if err != nil {
		return &connector.DecodeError{Err: err}
	}
	p, err := d.program(id)
	if err != nil {
		return err
	}
	if p.err != nil {
		return &connector.DecodeError{Err: p.err}
	}
	r := &d.r
	r.resetBytes(rec, 5)
	s := r.s
	before := b.Len()
	if d.envelope {
		err = p.env.decode(r, b, &d.table)
	} else {
		out := b.NewRow()
		if err = p.rec.decode(r, out); err == nil {
			d.finish(out)
			b.Append(row.Insert, out)
		}
	}
	if err == nil && r.pos != len(s) {
		err = r.fail("%d bytes after the datum", len(s)-r.pos)
	}
	if err != nil {
		b.Changes = b.Changes[:before]
		return decodeError(err)
	}
	return nil
}

// DecodeColumns implements connector.ColumnDecoder.
func (d *RegistryDecoder) DecodeColumns(cols []int) bool {
	if !d.selectColumns(cols) {
		return false
	}
	d.progs = map[int]*program{}
	d.lastProg = nil
	return true
}

// Clone implements connector.ParallelDecoder: the clone shares the
// registry client and its cache of schemas.
func (d *RegistryDecoder) Clone() connector.Decoder {
	c := *d
	c.progs = map[int]*program{}
	c.lastProg, c.r = nil, reader{}
	return &c
}

// RegistryEncoder writes avro-confluent or debezium-avro-confluent. It is
// not safe for concurrent use.
type RegistryEncoder struct {
	*confluent.Writer
	opts     RegistryOptions
	envelope bool
	prog     *recordEnc
	width    int
}

// NewRegistryEncoder returns an encoder of rows of schema; envelope
// writes Debezium's change events. It makes no request: the schema is
// registered (or checked) at the first record.
func NewRegistryEncoder(o RegistryOptions, schema row.Schema, envelope bool) (*RegistryEncoder, error) {
	reg, err := confluent.New(o.confluent())
	if err != nil {
		return nil, err
	}
	e := &RegistryEncoder{opts: o, envelope: envelope, width: schema.Len()}
	var w avro.Schema
	var text string
	if envelope {
		if o.Schema != "" {
			return nil, connector.Errorf("schema", "debezium-avro-confluent writes the envelope Flink derives from the table; a schema cannot be given")
		}
		// The envelope's before and after are records of the table's
		// columns: the row is written with the record's encoder.
		if _, text, err = writerSchema("", envelopeColumns(schema)); err != nil {
			return nil, err
		}
		w, _, err = writerSchema("", schema.Fields)
	} else {
		w, text, err = writerSchema(o.Schema, schema.Fields)
	}
	if err != nil {
		return nil, err
	}
	if e.prog, err = compileRecordEnc(w, schema.Fields); err != nil {
		return nil, connector.Errorf("schema", "%v", err)
	}
	e.Writer = confluent.NewWriter(reg, o.confluent(), schemaregistry.Schema{Text: text})
	return e, nil
}

// Encode appends the framed datum of one change.
func (e *RegistryEncoder) Encode(dst []byte, k row.Kind, r row.Row) ([]byte, error) {
	if len(r) != e.width {
		return dst, fmt.Errorf("avro-confluent: row has %d values, schema has %d columns", len(r), e.width)
	}
	header, err := e.Header()
	if err != nil {
		return dst, err
	}
	n := len(dst)
	out := append(dst, header...)
	if e.envelope {
		out, err = encodeEnvelope(e.prog, out, k, r)
	} else {
		out, err = e.prog.encode(out, r)
	}
	if err != nil {
		return dst[:n], err
	}
	return out, nil
}

// BinaryRecords implements connector.BinaryEncoder.
func (e *RegistryEncoder) BinaryRecords() {}

var (
	_ connector.ParallelDecoder = (*RegistryDecoder)(nil)
	_ connector.ColumnDecoder   = (*RegistryDecoder)(nil)
	_ connector.BinaryEncoder   = (*RegistryEncoder)(nil)
	_ connector.TopicFormat     = (*RegistryEncoder)(nil)
)
