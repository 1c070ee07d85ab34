package cdcjson

import (
	"github.com/etld/etld/pipeline/connector"
)

// FlinkFormat implements connector.FlinkFormat: Flink's canal-json.
func (d *CanalDecoder) FlinkFormat() (string, connector.FlinkTable) {
	t := d.codec.Options().Flink(true)
	if d.database != nil {
		t.Set("database.include", d.databaseInclude, "database_include")
	}
	if d.table != nil {
		t.Set("table.include", d.tableInclude, "table_include")
	}
	t.Differ("", `an UPDATE message of several rows: Flink's canal-json looks each column up in the whole "old" array (JsonNode.findValue), so a column that another row of the message changed is NULL in this row's before-image and retracts the wrong row; etld reads each row's own element of "old"`)
	return "canal-json", t
}

// FlinkFormat implements connector.FlinkFormat: Flink's maxwell-json.
func (d *MaxwellDecoder) FlinkFormat() (string, connector.FlinkTable) {
	return "maxwell-json", d.codec.Options().Flink(true)
}

// FlinkFormat implements connector.FlinkFormat: Flink's ogg-json.
func (d *OggDecoder) FlinkFormat() (string, connector.FlinkTable) {
	return "ogg-json", d.codec.Options().Flink(true)
}

// FlinkFormat implements connector.FlinkFormat: the format's Flink name.
func (e *Encoder) FlinkFormat() (string, connector.FlinkTable) {
	return e.shape.name, e.codec.Options().Flink(false)
}
