package debezium

import (
	"github.com/etld/etld/pipeline/connector"
)

// FlinkFormat implements connector.FlinkFormat: Flink's debezium-json.
func (d *Decoder) FlinkFormat() (string, connector.FlinkTable) {
	t := d.codec.Options().Flink(true)
	if d.schemaInclude != nil && *d.schemaInclude {
		t.Set("schema-include", "true", "schema_include")
	}
	if d.schemaInclude == nil {
		t.Differ("schema_include", "etld reads events with and without the schema envelope when schema_include is not set; Flink reads only events without it (schema-include false)")
	}
	return "debezium-json", t
}

// FlinkFormat implements connector.FlinkFormat: Flink's debezium-json.
func (e *Encoder) FlinkFormat() (string, connector.FlinkTable) {
	return "debezium-json", e.codec.Options().Flink(false)
}
