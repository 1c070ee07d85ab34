package raw

import (
	"github.com/etld/etld/pipeline/connector"
)

// FlinkFormat implements connector.FlinkFormat: Flink's raw format, one
// STRING column per line.
func (*Decoder) FlinkFormat() (string, connector.FlinkTable) {
	return "raw", connector.FlinkTable{}
}

// FlinkFormat implements connector.FlinkFormat: Flink's raw format.
func (*Encoder) FlinkFormat() (string, connector.FlinkTable) {
	return "raw", connector.FlinkTable{}
}
