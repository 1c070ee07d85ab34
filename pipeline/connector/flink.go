package connector

import (
	"fmt"
	"time"

	"github.com/etld/etld/pipeline/row"
)

// Flink export (etld export flink). A connector that has a Flink
// counterpart implements FlinkSource or FlinkSink, a format FlinkFormat
// on its decoder and encoder: the mapping of each option lives beside
// the typed config it maps, with the defaults the connector applied, and
// the exporter (pipeline/export) sees connectors only through these
// interfaces, as the runtime does through Source and Sink. A connector
// that implements neither cannot be exported, and the exporter says so.

// FlinkSource is a source that can be written as a Flink table.
type FlinkSource interface {
	// FlinkSource returns the table's WITH options and what Flink will
	// do differently from etld. It is called after construction.
	FlinkSource() (FlinkTable, error)
}

// FlinkSink is a sink that can be written as a Flink table. It is called
// after Bind, with the input the planner bound: the mode decides between
// Flink connectors (kafka or upsert-kafka).
type FlinkSink interface {
	FlinkSink(in SinkInput) (FlinkTable, error)
}

// FlinkFormat is a Decoder or Encoder that has a Flink format. Name is
// the Flink format's identifier ('csv'); the options' keys are relative
// to it ("field-delimiter" for 'csv.field-delimiter') and their fields
// relative to the format's mapping ("delimiter").
type FlinkFormat interface {
	FlinkFormat() (name string, t FlinkTable)
}

// FlinkOption is one option of a Flink table's WITH clause.
type FlinkOption struct {
	Key, Value string
	// Field is the etld option the value was taken from, relative to the
	// connector's mapping ("brokers", "format.delimiter"), or "" for a
	// value the connector fixes. The exporter looks there for a ${VAR}
	// to keep as a reference rather than write its value.
	Field string
}

// FlinkDifference is something the Flink table will do otherwise than
// etld: Field names the etld option (relative to the connector's
// mapping, "" for the connector as a whole) and What says what Flink
// does instead.
type FlinkDifference struct {
	Field, What string
}

// FlinkTable is how a source or sink reads in Flink SQL.
type FlinkTable struct {
	Options     []FlinkOption
	Differences []FlinkDifference
	// LookupDifferences hold only when a lookup join reads the table
	// (a LookupSource's): the exporter lists them for such a table.
	LookupDifferences []FlinkDifference
	// HeaderRows: the format reads a header line that Flink's cannot
	// skip (csv with header), which reaches Flink as a row with NULL in
	// each column whose type its text does not parse as and the names in
	// the others. The exporter reads the table through a view that drops
	// such rows.
	HeaderRows bool
	// PartitionKeys, for a sink, are the columns of its table's
	// PARTITIONED BY (the filesystem connector's partition directories).
	PartitionKeys []string
	// Types, for a sink, are the column types its Flink table declares
	// when they are not all the input's (nil): the exporter casts the
	// columns whose type differs in the INSERT.
	Types []row.Type
}

// Set adds the option key = value, taken from the etld option field.
func (t *FlinkTable) Set(key, value, field string) {
	t.Options = append(t.Options, FlinkOption{Key: key, Value: value, Field: field})
}

// Differ records a difference about field.
func (t *FlinkTable) Differ(field, format string, args ...any) {
	t.Differences = append(t.Differences, FlinkDifference{Field: field, What: fmt.Sprintf(format, args...)})
}

// AddFormat adds the Flink options of a format: under prefix ("" gives
// 'format' = 'csv', 'csv.field-delimiter'; "value." gives 'value.format'
// = 'json', 'value.json.…'). codec is the connector's Decoder or
// Encoder; field is the connector's option that holds the format
// ("format", "key_format"). A codec without a Flink format is a
// difference: Flink gets the option name only.
func (t *FlinkTable) AddFormat(prefix string, codec any, field, etldName string) {
	ff, ok := codec.(FlinkFormat)
	if !ok {
		t.Set(prefix+"format", etldName, field)
		t.Differ(field, "Flink has no format %q; the script names it and Flink will refuse it", etldName)
		return
	}
	name, ft := ff.FlinkFormat()
	t.HeaderRows = t.HeaderRows || ft.HeaderRows
	t.Set(prefix+"format", name, field)
	for _, o := range ft.Options {
		t.Set(prefix+name+"."+o.Key, o.Value, joinField(field, o.Field))
	}
	for _, d := range ft.Differences {
		t.Differ(joinField(field, d.Field), "%s", d.What)
	}
}

func joinField(parent, field string) string {
	if field == "" {
		return parent
	}
	if parent == "" {
		return field
	}
	return parent + "." + field
}

// FlinkDuration writes d as a Flink duration option ('500 ms', '10 s').
func FlinkDuration(d time.Duration) string {
	ms := d.Milliseconds()
	switch {
	case ms%60000 == 0 && ms != 0:
		return fmt.Sprintf("%d min", ms/60000)
	case ms%1000 == 0 && ms != 0:
		return fmt.Sprintf("%d s", ms/1000)
	}
	return fmt.Sprintf("%d ms", ms)
}
