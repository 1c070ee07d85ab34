package json

import (
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// FlinkFormat implements connector.FlinkFormat: Flink's json format.
func (d *Decoder) FlinkFormat() (string, connector.FlinkTable) {
	return "json", d.codec.opts.Flink(true)
}

// FlinkFormat implements connector.FlinkFormat: Flink's json format.
func (e *Encoder) FlinkFormat() (string, connector.FlinkTable) {
	t := e.codec.opts.Flink(false)
	e.codec.FlinkDecimals(&t)
	return "json", t
}

// FlinkDecimals records, for an encoder of DECIMAL columns, that Flink's
// JSON formats write a decimal normalised (Jackson's JsonNodeFactory
// strips its trailing zeros: 17.50 as 17.5, 100.00 as 1E+2) where etld
// writes the column's scale.
func (c *Codec) FlinkDecimals(t *connector.FlinkTable) {
	for _, f := range c.schema.Fields {
		if f.Type.ID == row.Decimal {
			t.Differ("", "Flink's JSON formats write a DECIMAL without its trailing zeros (17.50 as 17.5, 100.00 as 1E+2; as a plain number with encode.decimal-as-plain-number); etld writes the column's scale (column %s)", f.Name)
			return
		}
	}
}

// Options returns the options the codec was made with.
func (c *Codec) Options() Options { return c.opts }

// Flink returns the options as Flink's json-based formats name them
// (relative to the format: timestamp-format.standard), for reading or
// for writing.
func (o Options) Flink(reading bool) connector.FlinkTable {
	var t connector.FlinkTable
	if o.iso() {
		t.Set("timestamp-format.standard", "ISO-8601", "timestamp_format")
	}
	if reading && o.FailOnMissingField {
		t.Set("fail-on-missing-field", "true", "fail_on_missing_field")
	}
	if !reading && o.EncodeDecimalAsPlainNumber {
		t.Set("encode.decimal-as-plain-number", "true", "encode_decimal_as_plain_number")
	}
	return t
}
