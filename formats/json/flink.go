package json

import (
	"github.com/etld/etld/pipeline/connector"
)

// FlinkFormat implements connector.FlinkFormat: Flink's json format.
func (d *Decoder) FlinkFormat() (string, connector.FlinkTable) {
	return "json", d.codec.opts.Flink(true)
}

// FlinkFormat implements connector.FlinkFormat: Flink's json format.
func (e *Encoder) FlinkFormat() (string, connector.FlinkTable) {
	return "json", e.codec.opts.Flink(false)
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
