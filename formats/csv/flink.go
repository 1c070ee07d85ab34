package csv

import (
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// FlinkFormat implements connector.FlinkFormat: Flink's csv format.
// Flink's has no header: on reading, the export asks Flink to make the
// fields that do not parse NULL (csv.ignore-parse-errors), so that a
// header line becomes a row rather than a failed job, and drops that
// row (FlinkTable.HeaderRows).
func (d *Decoder) FlinkFormat() (string, connector.FlinkTable) {
	t := d.cfg.flink()
	if d.cfg.header {
		t.Set("ignore-parse-errors", "true", "header")
		t.HeaderRows = true
		t.Differ("header", "Flink's csv format has no header: it reads the header line as a row, with NULL in each column whose type the name does not parse as; the export sets csv.ignore-parse-errors so that the line does not fail the job (which also makes every other unparsable field NULL instead of failing) and reads the table through a view that drops rows that look like the header (a data row equal to the column names is dropped too)")
	}
	return "csv", t
}

// FlinkFormat implements connector.FlinkFormat: Flink's csv format.
func (e *Encoder) FlinkFormat() (string, connector.FlinkTable) {
	t := e.cfg.flink()
	if e.cfg.header {
		t.Differ("header", "Flink's csv format writes no header line")
	}
	for _, f := range e.schema.Fields {
		if id := f.Type.ID; id == row.Timestamp || id == row.TimestampLTZ {
			t.Differ("", "Flink's csv format writes a timestamp quoted and without a zero fraction (\"2019-01-17 09:43:10\"); etld writes 2019-01-17 09:43:10.000 (column %s)", f.Name)
			break
		}
	}
	return "csv", t
}

func (c config) flink() connector.FlinkTable {
	var t connector.FlinkTable
	if c.delim != ',' {
		d := string(c.delim)
		if c.delim == '\t' {
			d = `\t` // Flink reads the two characters as a tab
		}
		t.Set("field-delimiter", d, "delimiter")
	}
	switch c.quote {
	case 0:
		t.Set("disable-quote-character", "true", "quote")
	case '"':
	default:
		t.Set("quote-character", string(c.quote), "quote")
	}
	if c.hasNull {
		t.Set("null-literal", c.nullLit, "null_literal")
	}
	return t
}
