package pipetest

// Checking a test against the plan: its sources, sinks and columns exist,
// its values fit their columns' types, and its raw records have a format
// to decode them.

import (
	"fmt"
	"os"
	"strings"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/plan"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

// testCase is a test checked against the plan, its inputs and
// expectations in the types of their columns.
type testCase struct {
	test        *spec.Test
	inputs      map[string]*input
	expect      []*expectation
	deadLetters []*deadLetterCheck
}

// input is one source's records.
type input struct {
	records []record
	// format decodes raw records (lines:, file:) into decodedSchema, the
	// source's columns that are not metadata; columns maps them to their
	// index in the physical row. nil for rows:.
	format        *connector.FormatSpec
	decodedSchema row.Schema
	columns       []int
}

func prepare(t *spec.Test, pl *plan.Plan, reg *connector.Registry, errs *spec.List) *testCase {
	c := &testCase{test: t, inputs: map[string]*input{}}
	sources := map[string]*plan.Source{}
	var sourceNames []string
	for _, s := range pl.Sources {
		sources[s.Spec.Name] = s
		sourceNames = append(sourceNames, s.Spec.Name)
	}
	for _, in := range t.Inputs {
		src, ok := sources[in.Source]
		if !ok {
			errs.Addf(in.Pos, in.Path, "%q is not a source of this pipeline%s", in.Source, suggest(in.Source, sourceNames))
			continue
		}
		c.inputs[in.Source] = prepareInput(in, src, reg, errs)
	}
	sinks := map[string]*plan.Sink{}
	var sinkNames []string
	for _, s := range pl.Sinks {
		sinks[s.Spec.Name] = s
		sinkNames = append(sinkNames, s.Spec.Name)
	}
	for _, e := range t.Expect {
		sk, ok := sinks[e.Sink]
		if !ok {
			errs.Addf(e.Pos, e.Path, "%q is not a sink of this pipeline%s", e.Sink, suggest(e.Sink, sinkNames))
			continue
		}
		c.expect = append(c.expect, prepareExpect(e, sk, errs))
	}
	for _, d := range t.DeadLetters {
		if check := prepareDeadLetters(d, sources, sourceNames, errs); check != nil {
			c.deadLetters = append(c.deadLetters, check)
		}
	}
	return c
}

func suggest(name string, names []string) string {
	if c := spec.Closest(name, names); c != "" {
		return fmt.Sprintf("; did you mean %q?", c)
	}
	return "; it has " + strings.Join(names, ", ")
}

func prepareInput(in *spec.TestInput, src *plan.Source, reg *connector.Registry, errs *spec.List) *input {
	out := &input{}
	physical := src.Physical
	if in.Rows != nil || (!in.HasLines && in.File == "") {
		for _, r := range in.Rows {
			if r.Kind != row.Insert && src.LookedUp() {
				errs.Addf(r.Pos, r.Path, "%s is a lookup table, which holds rows, not changes: write the row without the kind %s", src.Spec.Name, r.Kind)
				continue
			}
			vals, ok := rowValues(r, physical, false, src.Spec.Name, errs)
			if ok {
				out.records = append(out.records, record{kind: r.Kind, row: vals, pos: r.Pos.String()})
			}
		}
		return out
	}
	// Raw records go through the source's format, with its options.
	f, err := formatOf(src.Spec)
	if err != nil {
		errs.Add(err)
		return out
	}
	var decoded []row.Field
	metadata := map[string]bool{}
	for _, c := range src.Spec.Schema {
		if c.Metadata != "" {
			metadata[c.Name] = true
		}
	}
	for i, fl := range physical.Fields {
		if !metadata[fl.Name] {
			decoded = append(decoded, fl)
			out.columns = append(out.columns, i)
		}
	}
	out.decodedSchema = row.NewSchema(decoded...)
	dec, err := reg.NewDecoder(f, out.decodedSchema)
	if err != nil {
		errs.Add(err)
		return out
	}
	out.format = &f
	hd, _ := dec.(connector.HeaderDecoder)
	header := hd != nil && hd.HasHeader()
	add := func(raw []byte, pos string) {
		out.records = append(out.records, record{raw: raw, header: header, pos: pos})
		header = false
	}
	if in.HasLines {
		for _, l := range in.Lines {
			add([]byte(l.Text), l.Pos.String())
		}
		return out
	}
	data, err := os.ReadFile(in.File)
	if err != nil {
		errs.Addf(in.FilePos, in.Path+".file", "cannot read the input file: %v", err)
		return out
	}
	for _, r := range splitRecords(data, dec) {
		add(r.raw, fmt.Sprintf("%s:%d", in.File, r.line))
	}
	return out
}

// formatOf reads a source's format option as its connector does; a
// source that sets none reads csv, as the file source does.
func formatOf(s *spec.Source) (connector.FormatSpec, error) {
	n := s.Options
	for i := 0; n != nil && i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "format" {
			var f connector.FormatSpec
			err := f.DecodeNode(s.Pos.File, n.Content[i+1], spec.JoinPath(s.Path, "format"))
			return f, err
		}
	}
	if s.Type == "datagen" {
		return connector.FormatSpec{}, spec.Errorf(s.Pos, s.Path, "source %q (datagen) reads no records: give its test input as rows", s.Name)
	}
	return connector.FormatSpec{Type: "csv", File: s.Pos.File, Path: spec.JoinPath(s.Path, "format"), Pos: s.Pos}, nil
}

// rowValues turns a test row into a row of schema. A source's row may
// leave columns out (they are NULL); an expected row must name them all,
// so that a column the test forgot is not silently taken as NULL.
func rowValues(r *spec.TestRow, schema row.Schema, all bool, table string, errs *spec.List) (row.Row, bool) {
	out := make(row.Row, schema.Len())
	seen := make([]bool, schema.Len())
	ok := true
	for _, v := range r.Values {
		i := indexFold(schema, v.Column)
		if i < 0 {
			errs.Addf(v.KeyPos, v.Path, "%s has no column %q%s", table, v.Column, suggest(v.Column, schema.Names()))
			ok = false
			continue
		}
		seen[i] = true
		if v.Null {
			out[i] = row.NullValue
			continue
		}
		val, err := row.ParseText(v.Text, schema.Fields[i].Type)
		if err != nil {
			errs.Addf(v.Pos, v.Path, "column %s is %s: %v", schema.Fields[i].Name, schema.Fields[i].Type, err)
			ok = false
			continue
		}
		out[i] = val
	}
	if all {
		var missing []string
		for i, s := range seen {
			if !s {
				missing = append(missing, schema.Fields[i].Name)
			}
		}
		if len(missing) > 0 {
			errs.Addf(r.Pos, r.Path, "the row gives no value for %s of %s (write `%s: null` for NULL)", strings.Join(missing, ", "), table, missing[0])
			ok = false
		}
	}
	return out, ok
}

// indexFold finds a column by name, as SQL does, without regard to case.
func indexFold(s row.Schema, name string) int {
	for i, f := range s.Fields {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}
