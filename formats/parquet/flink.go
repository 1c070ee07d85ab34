package parquet

import (
	"github.com/etld/etld/pipeline/connector"
)

// FlinkFormat implements connector.FlinkFormat: Flink's parquet format.
// Flink writes TIMESTAMP as INT96 unless told to write INT64 in one unit
// for every column, and reads the wall clock of a TIMESTAMP in the JVM's
// time zone unless utc-timezone is set; both are set to read and write as
// etld does.
func (d *Decoder) FlinkFormat() (string, connector.FlinkTable) {
	var t connector.FlinkTable
	t.Set("utc-timezone", "true", "")
	return "parquet", t
}

// FlinkFormat implements connector.FlinkFormat.
func (e *Encoder) FlinkFormat() (string, connector.FlinkTable) {
	var t connector.FlinkTable
	t.Set("compression", map[string]string{"snappy": "SNAPPY", "zstd": "ZSTD", "gzip": "GZIP", "none": "UNCOMPRESSED"}[e.opts.codec], "compression")
	t.Set("utc-timezone", "true", "")
	t.Set("write.int64.timestamp", "true", "")
	if e.opts.unit != 0 {
		t.Set("timestamp.time.unit", e.opts.unit.String(), "timestamp_unit")
	} else if u, mixed := e.timestampUnit(); u != 0 {
		t.Set("timestamp.time.unit", u.String(), "")
		if mixed {
			t.Differ("timestamp_unit", "etld writes each TIMESTAMP column in the unit of its precision (millis up to 3, micros up to 6); Flink writes every one in %s", u)
		}
	}
	t.Differ("row_group_size", "Flink ends a row group at parquet.block.size bytes (128 MiB), etld after row_group_size rows (%d)", e.opts.groupRows)
	return "parquet", t
}

// timestampUnit is the unit of the schema's TIMESTAMP columns (the
// finest, when they differ: mixed).
func (e *Encoder) timestampUnit() (u unit, mixed bool) {
	var walk func(s *shredder)
	walk = func(s *shredder) {
		if s.unit != 0 {
			if u != 0 && s.unit != u {
				mixed = true
			}
			u = max(u, s.unit)
		}
		for _, k := range s.kids {
			walk(k)
		}
	}
	for _, s := range e.cols {
		walk(s)
	}
	return u, mixed
}

var (
	_ connector.FlinkFormat = (*Decoder)(nil)
	_ connector.FlinkFormat = (*Encoder)(nil)
)
