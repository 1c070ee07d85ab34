package connector

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

// Registry maps type names to connector and format constructors. It is a
// value: the CLI fills one with everything built in (sources.Register,
// sinks.Register, formats.Register); tests build their own.
type Registry struct {
	sources map[string]sourceEntry
	sinks   map[string]sinkEntry
	formats map[string]formatEntry
}

type sourceEntry struct {
	summary string
	build   func(file string, n *yaml.Node, path string, env SourceEnv) (Source, error)
}

type sinkEntry struct {
	summary string
	build   func(file string, n *yaml.Node, path string, env SinkEnv) (Sink, error)
}

type formatEntry struct {
	summary string
	// changelog: records carry row kinds (FormatChangelog).
	changelog bool
	decoder   func(file string, n *yaml.Node, path string, schema row.Schema) (Decoder, error)
	encoder   func(file string, n *yaml.Node, path string, schema row.Schema) (Encoder, error)
	// bulk: a bulk format (bulk.go), built by bulkDecoder and bulkEncoder
	// rather than decoder and encoder.
	bulk        bool
	bulkDecoder func(file string, n *yaml.Node, path string, schema row.Schema) (BulkDecoder, error)
	bulkEncoder func(file string, n *yaml.Node, path string, schema row.Schema) (BulkEncoder, error)
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{
		sources: map[string]sourceEntry{},
		sinks:   map[string]sinkEntry{},
		formats: map[string]formatEntry{},
	}
}

// RegisterSource adds a source type whose options decode into C.
func RegisterSource[C any](r *Registry, typ, summary string, ctor func(C, SourceEnv) (Source, error)) {
	if _, dup := r.sources[typ]; dup {
		panic("connector: source type registered twice: " + typ)
	}
	r.sources[typ] = sourceEntry{summary: summary, build: func(file string, n *yaml.Node, path string, env SourceEnv) (Source, error) {
		var cfg C
		if err := spec.Decode(file, n, path, &cfg, spec.CommonSourceKeys...); err != nil {
			return nil, err
		}
		src, err := ctor(cfg, env)
		return built(src, err, file, n, path)
	}}
}

// RegisterSink adds a sink type whose options decode into C.
func RegisterSink[C any](r *Registry, typ, summary string, ctor func(C, SinkEnv) (Sink, error)) {
	if _, dup := r.sinks[typ]; dup {
		panic("connector: sink type registered twice: " + typ)
	}
	r.sinks[typ] = sinkEntry{summary: summary, build: func(file string, n *yaml.Node, path string, env SinkEnv) (Sink, error) {
		var cfg C
		if err := spec.Decode(file, n, path, &cfg, spec.CommonSinkKeys...); err != nil {
			return nil, err
		}
		sink, err := ctor(cfg, env)
		return built(sink, err, file, n, path)
	}}
}

// FormatOption says something about a format at its registration.
type FormatOption func(*formatEntry)

// FormatChangelog marks a changelog format (debezium-json, canal-json,
// ...): its records carry row kinds, so a source reading it is updating
// (+I -U +U -D) whatever the connector, and a sink writing it writes every
// kind. Flink's DecodingFormat.getChangelogMode, as a flag.
func FormatChangelog(e *formatEntry) { e.changelog = true }

// RegisterFormat adds a format whose options decode into C. Either
// constructor may be nil when the format only reads or only writes.
func RegisterFormat[C any](r *Registry, typ, summary string,
	newDecoder func(C, row.Schema) (Decoder, error),
	newEncoder func(C, row.Schema) (Encoder, error),
	opts ...FormatOption,
) {
	e := formatEntry{summary: summary}
	for _, o := range opts {
		o(&e)
	}
	e.decoder = formatCtor(newDecoder)
	e.encoder = formatCtor(newEncoder)
	r.addFormat(typ, e)
}

// RegisterBulkFormat adds a bulk format (bulk.go) whose options decode
// into C: one that reads and writes whole files. Either constructor may
// be nil when the format only reads or only writes.
func RegisterBulkFormat[C any](r *Registry, typ, summary string,
	newDecoder func(C, row.Schema) (BulkDecoder, error),
	newEncoder func(C, row.Schema) (BulkEncoder, error),
) {
	r.addFormat(typ, formatEntry{summary: summary, bulk: true,
		bulkDecoder: formatCtor(newDecoder), bulkEncoder: formatCtor(newEncoder)})
}

// RegisterBulkForm adds whole-file constructors (bulk.go) to a record
// format registered before, under the same name: a format whose records
// travel one by one in a topic and whose files have a form of their own,
// as Avro's datums and its object container files (a header with the
// schema, then blocks). The file source and sink take the bulk form, every
// other connector the records. Its options decode into C, which may take
// keys the record form does not.
func RegisterBulkForm[C any](r *Registry, typ string,
	newDecoder func(C, row.Schema) (BulkDecoder, error),
	newEncoder func(C, row.Schema) (BulkEncoder, error),
) {
	e, ok := r.formats[typ]
	if !ok || e.bulk {
		panic("connector: a bulk form added to a format not registered, or bulk already: " + typ)
	}
	e.bulk = true
	e.bulkDecoder, e.bulkEncoder = formatCtor(newDecoder), formatCtor(newEncoder)
	r.formats[typ] = e
}

func (r *Registry) addFormat(typ string, e formatEntry) {
	if _, dup := r.formats[typ]; dup {
		panic("connector: format registered twice: " + typ)
	}
	r.formats[typ] = e
}

// formatCtor wraps a format's typed constructor: it decodes the format's
// options (nil for the short form) into C and places its errors in the
// file. A nil constructor gives nil.
func formatCtor[C, T any](ctor func(C, row.Schema) (T, error)) func(file string, n *yaml.Node, path string, schema row.Schema) (T, error) {
	if ctor == nil {
		return nil
	}
	return func(file string, n *yaml.Node, path string, schema row.Schema) (T, error) {
		var cfg C
		if n != nil {
			if err := spec.Decode(file, n, path, &cfg, "type"); err != nil {
				var none T
				return none, err
			}
		}
		v, err := ctor(cfg, schema)
		return built(v, err, file, n, path)
	}
}

// built is what the registry returns for a constructor's result: the
// connector, or no connector at all and the error placed in the file. A
// constructor that fails often returns its half-built value, and a typed
// nil pointer (a nil *datagen.Source in a connector.Source) is a non-nil
// interface whose methods dereference nil; dropping the value here means
// no caller can call one. A constructor that returns neither a connector
// nor an error is a bug in it, reported rather than handed on.
func built[T any](conn T, err error, file string, n *yaml.Node, path string) (T, error) {
	var none T
	if err != nil {
		return none, fieldErrors(file, n, path, err)
	}
	if isNil(conn) {
		return none, spec.List{spec.Errorf(spec.At(file, n), path, "internal error: the constructor returned neither a connector nor an error")}
	}
	return conn, nil
}

// isNil reports whether v is a nil interface or holds a nil pointer.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Interface, reflect.Chan:
		return rv.IsNil()
	}
	return false
}

// Place turns a connector's errors about its options into errors of the
// pipeline file: a FieldError at the position of the option it names
// inside n (the connector's mapping, whose field path is path), any other
// error without a line at n. The registry does this for constructors; the
// planner for a sink's Bind, which may refuse its input with a FieldError
// too (an index pattern naming a column the input lacks).
func Place(file string, n *yaml.Node, path string, err error) error {
	return fieldErrors(file, n, path, err)
}

// fieldErrors turns a constructor's FieldErrors into spec errors at the
// option's position; other errors are placed at the connector's mapping.
// A constructor's messages may quote an option (a DSN its driver could not
// parse): every value substituted from ${VAR} into the connector's
// options is redacted from them, in any form and in pieces.
func fieldErrors(file string, n *yaml.Node, path string, err error) error {
	if err == nil {
		return nil
	}
	var list spec.List
	var visit func(error)
	visit = func(err error) {
		if joined, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range joined.Unwrap() {
				visit(e)
			}
			return
		}
		var se *spec.Error
		var sl spec.List
		var fe *FieldError
		switch {
		case errors.As(err, &sl):
			list = append(list, sl...)
		case errors.As(err, &se):
			list = append(list, se)
		case errors.As(err, &fe):
			list.Addf(spec.At(file, valueNode(n, fe.Field)), spec.JoinPath(path, fe.Field), "%s", fe.Msg)
		default:
			list.Addf(spec.At(file, n), path, "%v", err)
		}
	}
	visit(err)
	if len(list) == 0 {
		// An error that held nothing to report (an empty join) still
		// means the constructor failed.
		list.Addf(spec.At(file, n), path, "%v", err)
	}
	if n == nil {
		return list.Err()
	}
	// An error with no line (a decoder's complaint about the schema) is
	// placed at the connector, so that every error names file:line:col.
	list = list.Placed(spec.At(file, n), path)
	if spec.FromVar(n) {
		for i, e := range list {
			redacted := *e // the constructor's own *spec.Error stays as it was
			redacted.Msg = spec.Redact(n, e.Msg)
			list[i] = &redacted
		}
	}
	return list.Err()
}

// valueNode finds the value of a dotted key path inside a mapping, or
// returns the deepest mapping that exists.
func valueNode(n *yaml.Node, field string) *yaml.Node {
	if n == nil {
		return nil
	}
	for _, key := range strings.Split(field, ".") {
		if n.Kind != yaml.MappingNode {
			return n
		}
		found := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				n, found = n.Content[i+1], true
				break
			}
		}
		if !found {
			return n
		}
	}
	return n
}

func unknownType(kind, typ string, known []string) string {
	sort.Strings(known)
	hint := ""
	if c := spec.Closest(typ, known); c != "" {
		hint = fmt.Sprintf("did you mean %q? ", c)
	}
	return fmt.Sprintf("unknown %s type %q: %savailable: %s", kind, typ, hint, strings.Join(known, ", "))
}

// NewSource builds the source s describes.
func (r *Registry) NewSource(file string, s *spec.Source, env SourceEnv) (Source, error) {
	e, ok := r.sources[s.Type]
	if !ok {
		return nil, spec.Errorf(s.TypePos, s.Path+".type", "%s", spec.Redact(s.Options, unknownType("source", s.Type, keys(r.sources))))
	}
	return e.build(file, s.Options, s.Path, env)
}

// NewSink builds the sink s describes.
func (r *Registry) NewSink(file string, s *spec.Sink, env SinkEnv) (Sink, error) {
	e, ok := r.sinks[s.Type]
	if !ok {
		return nil, spec.Errorf(s.TypePos, s.Path+".type", "%s", spec.Redact(s.Options, unknownType("sink", s.Type, keys(r.sinks))))
	}
	return e.build(file, s.Options, s.Path, env)
}

// NewDecoder builds a decoder for the format f over schema.
func (r *Registry) NewDecoder(f FormatSpec, schema row.Schema) (Decoder, error) {
	e, ok := r.formats[f.Type]
	if ok && e.bulk && e.decoder == nil {
		return nil, bulkOnly(f)
	}
	if !ok || e.decoder == nil {
		return nil, spec.Errorf(f.Pos, f.Path, "%s", spec.Redact(f.node, unknownType("input format", f.Type, r.formatNames(true, false))))
	}
	d, err := e.decoder(f.File, f.Options, f.Path, schema)
	return d, atFormat(err, f.Pos)
}

// NewEncoder builds an encoder for the format f over schema.
func (r *Registry) NewEncoder(f FormatSpec, schema row.Schema) (Encoder, error) {
	e, ok := r.formats[f.Type]
	if ok && e.bulk && e.encoder == nil {
		return nil, bulkOnly(f)
	}
	if !ok || e.encoder == nil {
		return nil, spec.Errorf(f.Pos, f.Path, "%s", spec.Redact(f.node, unknownType("output format", f.Type, r.formatNames(false, false))))
	}
	enc, err := e.encoder(f.File, f.Options, f.Path, schema)
	return enc, atFormat(err, f.Pos)
}

// Bulk reports whether f names a bulk format (bulk.go), or a record
// format with a bulk form (RegisterBulkForm): a connector that reads or
// writes whole files takes it through NewBulkDecoder and NewBulkEncoder.
func (r *Registry) Bulk(f FormatSpec) bool { return r.formats[f.Type].bulk }

// NewBulkDecoder builds a decoder of whole files for the bulk format f.
func (r *Registry) NewBulkDecoder(f FormatSpec, schema row.Schema) (BulkDecoder, error) {
	e, ok := r.formats[f.Type]
	if !ok || e.bulkDecoder == nil {
		return nil, spec.Errorf(f.Pos, f.Path, "%s", spec.Redact(f.node, unknownType("bulk input format", f.Type, r.formatNames(true, true))))
	}
	d, err := e.bulkDecoder(f.File, f.Options, f.Path, schema)
	return d, atFormat(err, f.Pos)
}

// NewBulkEncoder builds an encoder of whole files for the bulk format f.
func (r *Registry) NewBulkEncoder(f FormatSpec, schema row.Schema) (BulkEncoder, error) {
	e, ok := r.formats[f.Type]
	if !ok || e.bulkEncoder == nil {
		return nil, spec.Errorf(f.Pos, f.Path, "%s", spec.Redact(f.node, unknownType("bulk output format", f.Type, r.formatNames(false, true))))
	}
	enc, err := e.bulkEncoder(f.File, f.Options, f.Path, schema)
	return enc, atFormat(err, f.Pos)
}

// bulkOnly is the error for a bulk format given to a connector of
// records (a Kafka topic's messages).
func bulkOnly(f FormatSpec) error {
	return spec.Errorf(f.Pos, f.Path, "format %s writes and reads whole files (row groups and a footer), not records: only the file source and the file sink take it", f.Type)
}

// Changelog reports whether the format f carries row kinds (registered
// with FormatChangelog): a source that reads it is updating, a sink that
// writes it writes -U and -D as records. An unknown format is not; building
// its decoder or encoder reports it.
func (r *Registry) Changelog(f FormatSpec) bool {
	return r.formats[f.Type].changelog
}

// atFormat places errors that name no line at the format option: the short
// form (`format: raw`) has no options node for the constructor's
// complaints (a schema the format cannot carry) to point at.
func atFormat(err error, pos spec.Pos) error {
	var list spec.List
	if errors.As(err, &list) {
		for _, e := range list {
			if !e.Pos.IsValid() {
				e.Pos = pos
			}
		}
	}
	return err
}

// formatNames lists the formats that read (decoders) or write, of
// records or bulk ones.
func (r *Registry) formatNames(decoders, bulk bool) []string {
	var out []string
	for name, e := range r.formats {
		var has bool
		switch {
		case bulk && decoders:
			has = e.bulkDecoder != nil
		case bulk:
			has = e.bulkEncoder != nil
		case decoders:
			has = e.decoder != nil
		default:
			has = e.encoder != nil
		}
		if has {
			out = append(out, name)
		}
	}
	return out
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Entry names a registered type and says what it is.
type Entry struct {
	Type, Summary string
}

// Sources lists the registered source types.
func (r *Registry) Sources() []Entry {
	return entries(r.sources, func(e sourceEntry) string { return e.summary })
}

// Sinks lists the registered sink types.
func (r *Registry) Sinks() []Entry {
	return entries(r.sinks, func(e sinkEntry) string { return e.summary })
}

// Formats lists the registered formats.
func (r *Registry) Formats() []Entry {
	return entries(r.formats, func(e formatEntry) string { return e.summary })
}

func entries[V any](m map[string]V, summary func(V) string) []Entry {
	var out []Entry
	for _, k := range keys(m) {
		out = append(out, Entry{Type: k, Summary: summary(m[k])})
	}
	return out
}
