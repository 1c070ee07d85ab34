// Package protobuf is the protobuf formats:
//
//   - protobuf: each record one message in Protocol Buffers' wire format,
//     of a message type from a .proto file (compiled here, with the
//     well-known types and the file's own directory to import from) or
//     from a descriptor set (protoc --descriptor_set_out
//     --include_imports), as Flink's protobuf format reads and writes it;
//   - protobuf-confluent: the message framed for a schema registry
//     (Confluent's wire format: a zero byte, the schema id in four bytes
//     big-endian, the message's index path in its file as zigzag varints,
//     a lone 0 for the first message). The reader compiles each id's
//     .proto text from the registry once; the writer registers its
//     .proto file's text under the subject.
//
// Columns match fields by name (then JSON name, then in any case); a
// field no column names is skipped, a column no field has is NULL.
// Nested messages are ROW, repeated fields ARRAY (packed or not), maps
// MAP; google.protobuf.Timestamp is TIMESTAMP_LTZ or TIMESTAMP, the
// wrappers (Int64Value, StringValue, ...) their value or NULL; an enum is
// its value's name as STRING or its number as INT. An absent field with
// presence (a message, a proto2 or proto3 optional field, a oneof member)
// is NULL, or its default with read_default_values; an absent proto3
// field without presence is its zero value. Writing leaves NULL out, and
// a proto3 field without presence that holds its zero value, as proto's
// own encoder does.
package protobuf

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/etld/etld/formats/confluent"
	"github.com/etld/etld/internal/schemaregistry"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// Options are the protobuf format's options.
type Options struct {
	// ProtoFile is the .proto file that defines the message.
	ProtoFile string `yaml:"proto_file"`
	// DescriptorSet is a FileDescriptorSet file, instead of ProtoFile.
	DescriptorSet string `yaml:"descriptor_set"`
	// Message is the message type's full name (shop.Order), or its name
	// when that is unique; not given, the .proto file's first message.
	Message string `yaml:"message"`
	// ReadDefaultValues (Flink's protobuf.read-default-values): an absent
	// field with presence reads as its default rather than NULL.
	ReadDefaultValues bool `yaml:"read_default_values"`
}

// RegistryOptions are protobuf-confluent's options.
type RegistryOptions struct {
	URL     string `yaml:"url,required"`
	Subject string `yaml:"subject"`
	// ProtoFile and Message are the writer's schema: the file's text is
	// what it registers. The reader reads each record with the schema
	// its id names.
	ProtoFile         string        `yaml:"proto_file"`
	Message           string        `yaml:"message"`
	AutoRegister      *bool         `yaml:"auto_register"`
	BasicAuthUserInfo string        `yaml:"basic_auth_user_info"`
	BearerToken       string        `yaml:"bearer_token"`
	Timeout           time.Duration `yaml:"timeout"`
	ReadDefaultValues bool          `yaml:"read_default_values"`
}

func (o RegistryOptions) confluent() confluent.Options {
	return confluent.Options{URL: o.URL, Subject: o.Subject, AutoRegister: o.AutoRegister,
		BasicAuthUserInfo: o.BasicAuthUserInfo, BearerToken: o.BearerToken, Timeout: o.Timeout}
}

// Register adds protobuf and protobuf-confluent to r.
func Register(r *connector.Registry) {
	connector.RegisterFormat(r, "protobuf", "Protocol Buffers messages of a type from a .proto file or a descriptor set",
		func(o Options, s row.Schema) (connector.Decoder, error) { return NewDecoder(o, s) },
		func(o Options, s row.Schema) (connector.Encoder, error) { return NewEncoder(o, s) })
	connector.RegisterFormat(r, "protobuf-confluent", "Protocol Buffers framed for a schema registry (Confluent's wire format)",
		func(o RegistryOptions, s row.Schema) (connector.Decoder, error) { return NewRegistryDecoder(o, s) },
		func(o RegistryOptions, s row.Schema) (connector.Encoder, error) { return NewRegistryEncoder(o, s) })
}

// message loads the message type o names.
func (o Options) message() (protoreflect.MessageDescriptor, error) {
	switch {
	case o.ProtoFile != "" && o.DescriptorSet != "":
		return nil, connector.Errorf("descriptor_set", "give proto_file or descriptor_set, not both")
	case o.ProtoFile != "":
		fd, _, err := loadFile(o.ProtoFile)
		if err != nil {
			return nil, connector.Errorf("proto_file", "%v", err)
		}
		md, err := findMessage(fd, o.Message)
		if err != nil {
			return nil, connector.Errorf("message", "%v", err)
		}
		return md, nil
	case o.DescriptorSet != "":
		files, err := loadDescriptorSet(o.DescriptorSet)
		if err != nil {
			return nil, connector.Errorf("descriptor_set", "%v", err)
		}
		if o.Message == "" {
			return nil, connector.Errorf("message", "required with descriptor_set: the message type's full name, such as shop.Order")
		}
		d, err := files.FindDescriptorByName(protoreflect.FullName(o.Message))
		md, ok := d.(protoreflect.MessageDescriptor)
		if err != nil || !ok {
			return nil, connector.Errorf("message", "no message %s in %s", o.Message, filepath.Base(o.DescriptorSet))
		}
		return md, nil
	}
	return nil, connector.Errorf("proto_file", "required: the .proto file of the message (or descriptor_set)")
}

// table is a decoder's columns and which of them are decoded where.
type table struct {
	columns      []row.Field
	at           []int
	copies       [][2]int
	readDefaults bool
}

func (t *table) finish(r row.Row) {
	for _, c := range t.copies {
		r[c[1]] = r[c[0]]
	}
}

func decodeError(err error) error {
	var fe *fieldError
	if errors.As(err, &fe) {
		return &connector.DecodeError{Column: fe.column, Err: fe.err}
	}
	return &connector.DecodeError{Err: err}
}

// Decoder reads the protobuf format. It is not safe for concurrent use;
// Clone gives another.
type Decoder struct {
	table
	opts Options
	md   protoreflect.MessageDescriptor
	prog *msgDec
}

// NewDecoder returns a decoder of messages of the type o names into rows
// of schema.
func NewDecoder(o Options, schema row.Schema) (*Decoder, error) {
	md, err := o.message()
	if err != nil {
		return nil, err
	}
	d := &Decoder{table: table{columns: schema.Fields, readDefaults: o.ReadDefaultValues}, opts: o, md: md}
	if d.prog, err = compileMessage(md, schema.Fields, nil, o.ReadDefaultValues); err != nil {
		return nil, connector.Errorf("message", "%v", err)
	}
	return d, nil
}

// Decode appends the row of one message to b.
func (d *Decoder) Decode(b []byte, batch *row.Batch) error {
	return decodeInto(d.prog, &d.table, &rec{b: b, s: string(b)}, 0, batch)
}

func decodeInto(prog *msgDec, t *table, r *rec, start int, b *row.Batch) error {
	out := b.NewRow()
	if err := prog.decode(r, start, len(r.b), out); err != nil {
		return decodeError(err)
	}
	t.finish(out)
	b.Append(row.Insert, out)
	return nil
}

// DecodeColumns implements connector.ColumnDecoder.
func (d *Decoder) DecodeColumns(cols []int) bool {
	at, copies, ok := connector.ColumnPlaces(len(d.columns), cols)
	if !ok {
		return false
	}
	prog, err := compileMessage(d.md, d.columns, at, d.readDefaults)
	if err != nil {
		return false
	}
	d.at, d.copies, d.prog = at, copies, prog
	return true
}

// Clone implements connector.ParallelDecoder.
func (d *Decoder) Clone() connector.Decoder {
	c := *d
	return &c
}

// Encoder writes the protobuf format.
type Encoder struct {
	opts  Options
	prog  *msgEnc
	width int
}

// NewEncoder returns an encoder of rows of schema as messages of the type
// o names.
func NewEncoder(o Options, schema row.Schema) (*Encoder, error) {
	md, err := o.message()
	if err != nil {
		return nil, err
	}
	prog, err := compileMessageEnc(md, schema.Fields)
	if err != nil {
		return nil, connector.Errorf("message", "%v", err)
	}
	return &Encoder{opts: o, prog: prog, width: schema.Len()}, nil
}

// Encode appends the message of r.
func (e *Encoder) Encode(dst []byte, _ row.Kind, r row.Row) ([]byte, error) {
	if len(r) != e.width {
		return dst, fmt.Errorf("protobuf: row has %d values, schema has %d columns", len(r), e.width)
	}
	n := len(dst)
	out, err := e.prog.encode(dst, r)
	if err != nil {
		return dst[:n], err
	}
	return out, nil
}

// BinaryRecords implements connector.BinaryEncoder.
func (e *Encoder) BinaryRecords() {}

// RegistryDecoder reads protobuf-confluent. It is not safe for
// concurrent use; Clone gives another.
type RegistryDecoder struct {
	table
	reg *confluent.Registry
	// files are the compiled .proto files by schema id; progs the
	// programs by id and message path.
	files map[int]protoreflect.FileDescriptor
	progs map[string]*msgDec
}

// NewRegistryDecoder returns a decoder of framed messages into rows of
// schema. It makes no request.
func NewRegistryDecoder(o RegistryOptions, schema row.Schema) (*RegistryDecoder, error) {
	reg, err := confluent.New(o.confluent())
	if err != nil {
		return nil, err
	}
	return &RegistryDecoder{table: table{columns: schema.Fields, readDefaults: o.ReadDefaultValues}, reg: reg,
		files: map[int]protoreflect.FileDescriptor{}, progs: map[string]*msgDec{}}, nil
}

// Decode appends the row of one framed message to b.
func (d *RegistryDecoder) Decode(b []byte, batch *row.Batch) error {
	id, err := confluent.FrameID(b)
	if err != nil {
		return &connector.DecodeError{Err: err}
	}
	path, n, err := readIndexes(b[5:])
	if err != nil {
		return &connector.DecodeError{Err: failAt(5, "message indexes: %v", err)}
	}
	prog, err := d.program(id, path)
	if err != nil {
		var ue *connector.UnavailableError
		if errors.As(err, &ue) {
			return err
		}
		return &connector.DecodeError{Err: err}
	}
	return decodeInto(prog, &d.table, &rec{b: b, s: string(b)}, 5+n, batch)
}

// readIndexes reads Confluent's message-index path: a count, then that
// many indexes, zigzag varints; a count of 0 is the path [0].
func readIndexes(b []byte) ([]int, int, error) {
	off := 0
	next := func() (int, error) {
		x, n := protowire.ConsumeVarint(b[off:])
		if n < 0 {
			return 0, protowire.ParseError(n)
		}
		off += n
		v := protowire.DecodeZigZag(x)
		if v < 0 || v > 1<<20 {
			return 0, fmt.Errorf("%d is no index", v)
		}
		return int(v), nil
	}
	count, err := next()
	if err != nil {
		return nil, 0, err
	}
	if count == 0 {
		return []int{0}, off, nil
	}
	if count > 64 {
		return nil, 0, fmt.Errorf("a path of %d messages", count)
	}
	path := make([]int, count)
	for i := range path {
		if path[i], err = next(); err != nil {
			return nil, 0, err
		}
	}
	return path, off, nil
}

// appendIndexes writes a message-index path.
func appendIndexes(dst []byte, path []int) []byte {
	if len(path) == 1 && path[0] == 0 {
		return append(dst, 0)
	}
	dst = protowire.AppendVarint(dst, protowire.EncodeZigZag(int64(len(path))))
	for _, i := range path {
		dst = protowire.AppendVarint(dst, protowire.EncodeZigZag(int64(i)))
	}
	return dst
}

func (d *RegistryDecoder) program(id int, path []int) (*msgDec, error) {
	key := fmt.Sprint(id, path)
	if p, ok := d.progs[key]; ok {
		return p, nil
	}
	fd, ok := d.files[id]
	if !ok {
		s, err := d.reg.SchemaByID(id)
		if err != nil {
			return nil, err
		}
		if s.Type != "PROTOBUF" {
			return nil, fmt.Errorf("schema id %d is a %s schema, not Protobuf", id, schemaType(s.Type))
		}
		if len(s.References) > 0 {
			return nil, fmt.Errorf("schema id %d imports other subjects' schemas, which etld does not fetch (only the well-known types can be imported)", id)
		}
		if fd, err = compileProto(fmt.Sprintf("schema-%d.proto", id), s.Text, ""); err != nil {
			return nil, fmt.Errorf("schema id %d: %w", id, err)
		}
		d.files[id] = fd
	}
	md, err := messageAt(fd, path)
	if err != nil {
		return nil, fmt.Errorf("schema id %d: %w", id, err)
	}
	prog, err := compileMessage(md, d.columns, d.at, d.readDefaults)
	if err != nil {
		return nil, fmt.Errorf("the writer's message %s (schema id %d) does not fit the table: %w", md.FullName(), id, err)
	}
	d.progs[key] = prog
	return prog, nil
}

func schemaType(t string) string {
	if t == "" {
		return "AVRO"
	}
	return t
}

// DecodeColumns implements connector.ColumnDecoder.
func (d *RegistryDecoder) DecodeColumns(cols []int) bool {
	at, copies, ok := connector.ColumnPlaces(len(d.columns), cols)
	if ok {
		d.at, d.copies, d.progs = at, copies, map[string]*msgDec{}
	}
	return ok
}

// Clone implements connector.ParallelDecoder.
func (d *RegistryDecoder) Clone() connector.Decoder {
	c := *d
	c.files, c.progs = map[int]protoreflect.FileDescriptor{}, map[string]*msgDec{}
	return &c
}

// RegistryEncoder writes protobuf-confluent.
type RegistryEncoder struct {
	*confluent.Writer
	prog  *msgEnc
	path  []byte // the message-index path, encoded
	width int
}

// NewRegistryEncoder returns an encoder of rows of schema as framed
// messages of the type o names; the .proto file's text is registered at
// the first record.
func NewRegistryEncoder(o RegistryOptions, schema row.Schema) (*RegistryEncoder, error) {
	reg, err := confluent.New(o.confluent())
	if err != nil {
		return nil, err
	}
	if o.ProtoFile == "" {
		return nil, connector.Errorf("proto_file", "required for writing: the .proto file whose text is registered")
	}
	fd, text, err := loadFile(o.ProtoFile)
	if err != nil {
		return nil, connector.Errorf("proto_file", "%v", err)
	}
	if fd.Imports().Len() > 0 {
		for i := range fd.Imports().Len() {
			if p := fd.Imports().Get(i).Path(); filepath.Dir(p) != "google/protobuf" {
				return nil, connector.Errorf("proto_file", "imports %s: a registered schema may import only the well-known types here", p)
			}
		}
	}
	md, err := findMessage(fd, o.Message)
	if err != nil {
		return nil, connector.Errorf("message", "%v", err)
	}
	prog, err := compileMessageEnc(md, schema.Fields)
	if err != nil {
		return nil, connector.Errorf("message", "%v", err)
	}
	return &RegistryEncoder{
		Writer: confluent.NewWriter(reg, o.confluent(), schemaregistry.Schema{Type: "PROTOBUF", Text: text}),
		prog:   prog, path: appendIndexes(nil, messageIndexes(md)), width: schema.Len(),
	}, nil
}

// Encode appends the framed message of r.
func (e *RegistryEncoder) Encode(dst []byte, _ row.Kind, r row.Row) ([]byte, error) {
	if len(r) != e.width {
		return dst, fmt.Errorf("protobuf-confluent: row has %d values, schema has %d columns", len(r), e.width)
	}
	header, err := e.Header()
	if err != nil {
		return dst, err
	}
	n := len(dst)
	out, err := e.prog.encode(append(append(dst, header...), e.path...), r)
	if err != nil {
		return dst[:n], err
	}
	return out, nil
}

// BinaryRecords implements connector.BinaryEncoder.
func (e *RegistryEncoder) BinaryRecords() {}

var (
	_ connector.ParallelDecoder = (*Decoder)(nil)
	_ connector.ColumnDecoder   = (*Decoder)(nil)
	_ connector.BinaryEncoder   = (*Encoder)(nil)
	_ connector.ParallelDecoder = (*RegistryDecoder)(nil)
	_ connector.ColumnDecoder   = (*RegistryDecoder)(nil)
	_ connector.BinaryEncoder   = (*RegistryEncoder)(nil)
	_ connector.TopicFormat     = (*RegistryEncoder)(nil)
)
