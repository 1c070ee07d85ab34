package export

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/plan"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

// source writes a source's CREATE TABLE.
func (x *exporter) source(s *plan.Source) {
	sp := s.Spec
	element := "source " + sp.Name
	fs, ok := s.Conn.(connector.FlinkSource)
	if !ok {
		x.errs.Addf(sp.TypePos, sp.Path+".type", "source type %q has no Flink counterpart: the pipeline cannot be exported", sp.Type)
		return
	}
	t, err := fs.FlinkSource()
	if err != nil {
		x.errs.Add(connector.Place(sp.Pos.File, sp.Options, sp.Path, err))
		return
	}
	if s.LookedUp() {
		t.Differences = append(t.Differences, t.LookupDifferences...)
	}
	x.sourceOnError(sp, &t)
	var cols []string
	for _, c := range sp.Schema {
		switch {
		case c.Computed != nil:
			e, err := x.formatSQL(c.Computed, parseExpr, c.Path, element)
			if err != nil {
				x.errs.Addf(c.Pos, c.Path, "%v", err)
				continue
			}
			cols = append(cols, fmt.Sprintf("%s AS %s", ident(c.Name), e))
		case c.Metadata != "":
			cols = append(cols, fmt.Sprintf("%s %s METADATA FROM %s VIRTUAL", ident(c.Name), c.Type, quote(c.Metadata)))
		default:
			cols = append(cols, fmt.Sprintf("%s %s", ident(c.Name), c.Type))
		}
	}
	if sp.Watermark != nil {
		root := s.Table.Root
		e, err := x.formatSQL(sp.Watermark, parseExpr, sp.Path+".watermark", element)
		switch {
		case err != nil:
			x.errs.Addf(sp.Watermark.Pos, sp.Path+".watermark", "%v", err)
		case root.TimeAttr < 0:
			x.errs.Addf(sp.Watermark.Pos, sp.Path+".watermark", "the watermark names no event-time column")
		default:
			cols = append(cols, fmt.Sprintf("WATERMARK FOR %s AS %s", ident(root.Schema.Fields[root.TimeAttr].Name), e))
		}
	}
	if len(sp.Key) > 0 {
		cols = append(cols, primaryKey(sp.Key))
	}
	if !t.HeaderRows {
		x.table(sp.Name, cols, t, sp.Options, sp.Pos.File, sp.Path, element)
		return
	}
	// The header line reaches Flink as a row: the names in the text
	// columns, NULL in the others. The view that takes the source's name
	// drops it; the table behind it keeps the time attribute.
	file := x.tableName(sp.Name + "_file")
	x.table(file, cols, t, sp.Options, sp.Pos.File, sp.Path, element)
	var header []string
	for _, c := range sp.Schema {
		switch {
		case c.Computed != nil || c.Metadata != "":
		case c.Type.ID == row.String:
			// COALESCE: a row of NULLs is no header.
			header = append(header, fmt.Sprintf("COALESCE(LOWER(%s) = %s, FALSE)", ident(c.Name), quote(strings.ToLower(c.Name))))
		default:
			header = append(header, ident(c.Name)+" IS NULL")
		}
	}
	fmt.Fprintf(&x.body, "CREATE TEMPORARY VIEW %s AS\nSELECT * FROM %s WHERE NOT (%s);\n\n", ident(sp.Name), ident(file), strings.Join(header, " AND "))
}

// sourceOnError maps a source's on_error policy: Flink's formats skip
// what they cannot decode only with <format>.ignore-parse-errors.
func (x *exporter) sourceOnError(sp *spec.Source, t *connector.FlinkTable) {
	oe := sp.OnError
	if oe.Policy == "fail" || oe.Policy == "" {
		return
	}
	format := ""
	for _, o := range t.Options {
		if o.Key == "format" || o.Key == "value.format" {
			format = o.Value
		}
	}
	prefix := ""
	if slices.ContainsFunc(t.Options, func(o connector.FlinkOption) bool { return o.Key == "value.format" }) {
		prefix = "value."
	}
	what := "etld sets aside a record that does not decode and counts it; Flink's ignore-parse-errors drops it unseen, and json formats keep a record whose field has the wrong type with that field NULL"
	if format == "" {
		// A table without a format (jdbc) converts each value itself.
		what = "etld sets aside a row whose value does not parse as its column's type and counts it; Flink's table fails the job on it"
	}
	key := prefix + format + ".ignore-parse-errors"
	if format != "raw" && format != "" && !slices.ContainsFunc(t.Options, func(o connector.FlinkOption) bool { return o.Key == key }) {
		t.Set(key, "true", "on_error")
	}
	if oe.Policy == "dead-letter" {
		what += fmt.Sprintf("; Flink has no dead-letter file: nothing is written to %s", deadLetter(sp.Options, oe))
	}
	x.differ(oe.Pos, sp.Path+".on_error", "source "+sp.Name, "%s", what)
}

// sink writes a sink's CREATE TABLE and returns its Flink table name.
func (x *exporter) sink(s *plan.Sink) string {
	sp := s.Spec
	element := "sink " + sp.Name
	name := x.tableName(sp.Name)
	x.selects = append(x.selects, "*")
	fs, ok := s.Conn.(connector.FlinkSink)
	if !ok {
		x.errs.Addf(sp.TypePos, sp.Path+".type", "sink type %q has no Flink counterpart: the pipeline cannot be exported", sp.Type)
		return name
	}
	schema := s.Input.Root.Schema
	in := connector.SinkInput{Schema: schema, Mode: s.Mode, Key: s.Key, Replay: s.Replay}
	if s.Mode == connector.Upsert && len(s.Key) == 0 && !s.Conn.Capabilities().Retract {
		x.errs.Addf(sp.Pos, sp.Path, "sink %q takes the one-row result of a global aggregate by an empty key; Flink's %s table needs a PRIMARY KEY to take an updating input: the pipeline cannot be exported (GROUP BY a constant column to give it a key)", sp.Name, sp.Type)
		return name
	}
	t, err := fs.FlinkSink(in)
	if err != nil {
		x.errs.Add(connector.Place(sp.Pos.File, sp.Options, sp.Path, err))
		return name
	}
	if sp.OnError.Policy == "skip" || sp.OnError.Policy == "dead-letter" {
		what := "Flink fails the job on a row the target refuses for good; etld skips it"
		if sp.OnError.Policy == "dead-letter" {
			what += fmt.Sprintf(" and writes it to %s", deadLetter(sp.Options, sp.OnError))
		}
		x.differ(sp.OnError.Pos, sp.Path+".on_error", element, "%s", what)
	}
	var cols []string
	var casts []string
	for i, f := range schema.Fields {
		typ := f.Type
		if t.Types != nil && t.Types[i] != f.Type {
			typ = t.Types[i]
			casts = append(casts, fmt.Sprintf("CAST(%s AS %s) AS %s", ident(f.Name), typ.Nullable(), ident(f.Name)))
		} else {
			casts = append(casts, ident(f.Name))
		}
		// Nullable: a NOT NULL that etld infers and Flink does not would
		// fail the INSERT; key columns are NOT NULL through the key.
		cols = append(cols, fmt.Sprintf("%s %s", ident(f.Name), typ.Nullable()))
	}
	if t.Types != nil {
		x.selects[len(x.selects)-1] = strings.Join(casts, ", ")
	}
	if s.Mode == connector.Upsert && len(s.Key) > 0 {
		names := make([]string, len(s.Key))
		for i, k := range s.Key {
			names[i] = schema.Fields[k].Name
		}
		cols = append(cols, primaryKey(names))
	}
	if name != sp.Name {
		x.differ(sp.Pos, sp.Path+".name", element, "Flink has one namespace for sources, views and sinks: the sink's table is named %s", name)
	}
	x.table(name, cols, t, sp.Options, sp.Pos.File, sp.Path, element)
	return name
}

func primaryKey(cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = ident(c)
	}
	return "PRIMARY KEY (" + strings.Join(q, ", ") + ") NOT ENFORCED"
}

// table writes CREATE TABLE name (cols) WITH (the options), and records
// the connector's differences.
func (x *exporter) table(name string, cols []string, t connector.FlinkTable, node *yaml.Node, file, path, element string) {
	for _, d := range t.Differences {
		n, at := find(node, d.Field), path
		if d.Field != "" {
			at = spec.JoinPath(path, d.Field)
		}
		// The text may quote a secret's value in a form of its own (a
		// password cut from a DSN): Redact finds those too.
		what, _ := unexpand(d.What, n)
		x.differ(spec.At(file, n), at, element, "%s", spec.Redact(node, what))
	}
	partitioned := ""
	if len(t.PartitionKeys) > 0 {
		keys := make([]string, len(t.PartitionKeys))
		for i, k := range t.PartitionKeys {
			keys[i] = ident(k)
		}
		partitioned = " PARTITIONED BY (" + strings.Join(keys, ", ") + ")"
	}
	fmt.Fprintf(&x.body, "CREATE TABLE %s (\n  %s\n)%s WITH (\n", ident(name), strings.Join(cols, ",\n  "), partitioned)
	secrets := substituted(node, nil)
	values := make([][]string, len(secrets))
	for i, n := range secrets {
		values[i] = spec.SecretValues(n)
	}
	for i, o := range t.Options {
		v := o.Value
		if o.Field != "" {
			v = x.reference(find(node, o.Field), o, v, path, element)
		}
		// Whatever the connector put where: no value of a variable
		// that is secret leaves in any form.
		for i, n := range secrets {
			if slices.ContainsFunc(values[i], func(secret string) bool { return strings.Contains(v, secret) }) {
				v = x.derived(n, o, path, element)
			}
		}
		sep := ","
		if i == len(t.Options)-1 {
			sep = ""
		}
		fmt.Fprintf(&x.body, "  %s = %s%s\n", quote(o.Key), quote(v), sep)
	}
	x.body.WriteString(");\n\n")
}

// reference keeps the ${VAR} references of the option's field: where
// the value a variable gave shows in the option, the reference is
// written instead.
func (x *exporter) reference(n *yaml.Node, o connector.FlinkOption, v, path, element string) string {
	v, names := unexpand(v, n)
	for _, name := range names {
		x.place(name, fmt.Sprintf("%s (%s)", spec.JoinPath(path, o.Field), element))
	}
	return v
}

// deadLetter names where an on_error puts its dead letters as the file
// names it, a file's ${VAR} references kept: "FILE", or "sink NAME".
func deadLetter(options *yaml.Node, oe spec.OnError) string {
	if oe.Sink != "" {
		return "sink " + oe.Sink
	}
	n := find(options, "dead_letter")
	if n == options {
		n = find(options, "on_error.file")
	}
	path, _ := unexpand(oe.DeadLetter, n)
	return path
}

// derived is the placeholder for a value made from a secret variable's
// value (the password inside a DSN): ${VAR_KEY}, documented as such.
func (x *exporter) derived(n *yaml.Node, o connector.FlinkOption, path, element string) string {
	_, names, _ := spec.Written(n)
	key := strings.ToUpper(nonWord.ReplaceAllString(o.Key[strings.LastIndex(o.Key, ".")+1:], "_"))
	name := names[0] + "_" + key
	x.place(name, fmt.Sprintf("the Flink option %s made from ${%s} (%s, %s); etld derives it from that value", o.Key, strings.Join(names, "}, ${"), spec.JoinPath(path, o.Field), element))
	return "${" + name + "}"
}

var nonWord = regexp.MustCompile(`[^A-Za-z0-9]+`)

func (x *exporter) place(name, where string) {
	if prev, ok := x.placeholders[name]; ok && !strings.Contains(prev, where) {
		where = prev + "; " + where
	} else if ok {
		return
	}
	x.placeholders[name] = where
}

// substituted appends the scalars at or below n whose value came from
// ${VAR}.
func substituted(n *yaml.Node, out []*yaml.Node) []*yaml.Node {
	if n == nil {
		return out
	}
	if _, _, ok := spec.Written(n); ok {
		out = append(out, n)
	}
	for _, c := range n.Content {
		out = substituted(c, out)
	}
	return out
}

// find returns the value node of a dotted field path inside a mapping,
// or the deepest node on the way that exists.
func find(n *yaml.Node, field string) *yaml.Node {
	if n == nil || field == "" {
		return n
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
