package avro

import (
	"github.com/etld/etld/pipeline/connector"
)

// FlinkFormat implements connector.FlinkFormat: Flink's avro format.
func (d *Decoder) FlinkFormat() (string, connector.FlinkTable) { return "avro", plainFlink(d.given) }

// FlinkFormat implements connector.FlinkFormat: Flink's avro format.
func (e *Encoder) FlinkFormat() (string, connector.FlinkTable) { return "avro", plainFlink(e.given) }

func plainFlink(given bool) connector.FlinkTable {
	var t connector.FlinkTable
	if given {
		t.Differ("schema", "Flink's avro format reads and writes the schema it derives from the table; etld uses the schema given")
	}
	return t
}

// FlinkFormat implements connector.FlinkFormat: Flink's avro-confluent
// or debezium-avro-confluent.
func (d *RegistryDecoder) FlinkFormat() (string, connector.FlinkTable) {
	return registryName(d.envelope), d.opts.flink(true)
}

// FlinkFormat implements connector.FlinkFormat: Flink's avro-confluent
// or debezium-avro-confluent.
func (e *RegistryEncoder) FlinkFormat() (string, connector.FlinkTable) {
	return registryName(e.envelope), e.opts.flink(false)
}

func registryName(envelope bool) string {
	if envelope {
		return "debezium-avro-confluent"
	}
	return "avro-confluent"
}

// flink maps the options to Flink's avro-confluent.* (a Kafka table's
// subject defaults to <topic>-value there too).
func (o RegistryOptions) flink(reading bool) connector.FlinkTable {
	var t connector.FlinkTable
	t.Set("url", o.URL, "url")
	if o.Subject != "" {
		t.Set("subject", o.Subject, "subject")
	}
	if o.Schema != "" {
		t.Set("schema", o.Schema, "schema")
	}
	if o.BasicAuthUserInfo != "" {
		t.Set("basic-auth.credentials-source", "USER_INFO", "")
		t.Set("basic-auth.user-info", o.BasicAuthUserInfo, "basic_auth_user_info")
	}
	if o.BearerToken != "" {
		t.Set("bearer-auth.credentials-source", "USER_INFO", "")
		t.Set("bearer-auth.token", o.BearerToken, "bearer_token")
	}
	if !reading && o.AutoRegister != nil && !*o.AutoRegister {
		t.Differ("auto_register", "Flink's writer always registers its schema under the subject; etld only checks that the subject has it")
	}
	return t
}

// FlinkFormat implements connector.FlinkFormat: Flink's avro format in
// the filesystem connector, which reads and writes object container
// files.
func (d *FileDecoder) FlinkFormat() (string, connector.FlinkTable) {
	return "avro", connector.FlinkTable{}
}

// FlinkFormat implements connector.FlinkFormat: Flink's avro format in
// the filesystem connector, its codec avro.codec.
func (e *FileEncoder) FlinkFormat() (string, connector.FlinkTable) {
	t := plainFlink(e.given)
	t.Set("codec", e.codec.name, "codec")
	if e.blockSize != defaultBlockSize {
		t.Differ("block_size", "Flink ends a block at its sync interval (64000 bytes); etld after block_size bytes (%d)", e.blockSize)
	}
	return "avro", t
}
