package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/etld/etld/internal/checkpoint"
	"github.com/etld/etld/pipeline"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// tableColumn names a dumped row's table in JSON, for an operator whose
// state has several (a join's sides).
var tableColumn = row.Field{Name: "$table", Type: row.Type{ID: row.String, NotNull: true}}

// stateDump writes an operator's state as rows: JSON lines, or CSV with
// a header line per table; hide hides secrets in the column names.
func stateDump(pos []string, f stateFlags, hide func(string) string, w io.Writer) error {
	store, err := checkpoint.OpenExisting(pos[0], pos[1])
	if err != nil {
		return err
	}
	cp, err := readCheckpoint(store, f.checkpoint)
	if err != nil {
		return err
	}
	comp, err := findOperator(cp, pos[2])
	if err != nil {
		return err
	}
	p, err := statePipeline(f.pipeline, pos[1])
	if err != nil {
		return err
	}
	defer p.Plan.Close()
	bw := bufio.NewWriterSize(w, 64<<10)
	dw := &dumpWriter{w: bw, format: f.format, only: f.table, hide: hide}
	if err := p.DumpState(store, cp, comp.ID, &pipeline.StateDump{Table: dw.table, Row: dw.emit}); err != nil {
		return err
	}
	if f.table != "" && !slices.Contains(dw.tables, f.table) {
		return &usageError{fmt.Sprintf("the state of %s has no table %q; it has %s", shortName(comp.ID), f.table, quoteAll(dw.tables))}
	}
	return bw.Flush()
}

// dumpWriter encodes the rows of a dump with the json or csv format.
type dumpWriter struct {
	w      io.Writer
	format string
	only   string // --table: the one table to write
	hide   func(string) string
	tables []string
	skip   bool // the current table is not --table's
	enc    connector.Encoder
	buf    []byte
	put    func(row.Row) error // the current table's way of writing
}

// emit is StateDump.Row.
func (d *dumpWriter) emit(r row.Row) error {
	if d.skip {
		return nil
	}
	return d.put(r)
}

func (d *dumpWriter) table(name string, cols row.Schema) error {
	d.tables = append(d.tables, name)
	d.skip = d.only != "" && name != d.only
	if d.skip {
		return nil
	}
	cols = row.NewSchema(slices.Clone(cols.Fields)...)
	for i := range cols.Fields {
		cols.Fields[i].Name = d.hide(cols.Fields[i].Name)
	}
	tagged := name != "" && d.format == "json"
	if tagged {
		cols = row.NewSchema(slices.Concat([]row.Field{tableColumn}, cols.Fields)...)
	}
	spec := connector.FormatSpec{Type: d.format}
	if d.format == "csv" {
		spec.Options = &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Value: "type"}, {Kind: yaml.ScalarNode, Value: "csv"},
			{Kind: yaml.ScalarNode, Value: "header"}, {Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"},
		}}
	}
	enc, err := registry().NewEncoder(spec, cols)
	if err != nil {
		return err
	}
	d.enc = enc
	if h, ok := enc.(connector.HeaderEncoder); ok {
		if len(d.tables) > 1 && d.only == "" {
			// The next table's header after an empty line.
			d.buf = append(d.buf[:0], '\n')
			if _, err := d.w.Write(d.buf); err != nil {
				return err
			}
		}
		if _, err := d.w.Write(h.AppendHeader(d.buf[:0])); err != nil {
			return err
		}
	}
	d.put = d.write
	if tagged {
		tag := row.StringValue(name)
		var withTag row.Row
		d.put = func(r row.Row) error {
			withTag = append(append(withTag[:0], tag), r...)
			return d.write(withTag)
		}
	}
	return nil
}

func (d *dumpWriter) write(r row.Row) error {
	var err error
	d.buf, err = d.enc.Encode(d.buf[:0], row.Insert, r)
	if err != nil {
		return err
	}
	_, err = d.w.Write(d.buf)
	return err
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
