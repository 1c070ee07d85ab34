// Package formats lists the built-in formats: the one place that names
// them all.
package formats

import (
	"github.com/etld/etld/formats/avro"
	"github.com/etld/etld/formats/cdcjson"
	"github.com/etld/etld/formats/csv"
	"github.com/etld/etld/formats/debezium"
	"github.com/etld/etld/formats/json"
	"github.com/etld/etld/formats/parquet"
	"github.com/etld/etld/formats/protobuf"
	"github.com/etld/etld/formats/raw"
	"github.com/etld/etld/pipeline/connector"
)

// Register adds every built-in format to r: csv, json, raw, parquet (a
// bulk format, for the file source and sink) and the changelog formats
// debezium-json, canal-json, maxwell-json, ogg-json; avro, avro-confluent,
// debezium-avro-confluent, protobuf and protobuf-confluent.
func Register(r *connector.Registry) {
	avro.Register(r)
	protobuf.Register(r)
	csv.Register(r)
	parquet.Register(r)
	json.Register(r)
	debezium.Register(r)
	cdcjson.Register(r)
	raw.Register(r)
}
