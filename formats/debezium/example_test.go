package debezium_test

import (
	"fmt"

	"github.com/etld/etld/formats/debezium"
	"github.com/etld/etld/pipeline/row"
)

// Debezium events become changelog rows; Flink's encoding writes them back
// as create and delete events.
func Example() {
	schema := row.NewSchema(
		row.Field{Name: "id", Type: row.Of(row.BigInt)},
		row.Field{Name: "name", Type: row.Of(row.String)},
	)
	dec, _ := debezium.NewDecoder(debezium.Options{}, schema)
	b := row.NewBatch(4, schema.Len())
	for _, event := range []string{
		`{"before":null,"after":{"id":1,"name":"a"},"op":"c"}`,
		`{"before":{"id":1,"name":"a"},"after":{"id":1,"name":"b"},"op":"u","source":{"db":"shop"}}`,
		``, // the tombstone after a delete
	} {
		if err := dec.Decode([]byte(event), b); err != nil {
			fmt.Println(err)
		}
	}
	fmt.Print(b)

	enc, _ := debezium.NewEncoder(debezium.Options{}, schema)
	for _, c := range b.Changes {
		out, _ := enc.Encode(nil, c.Kind, c.Row)
		fmt.Print(string(out))
	}
	// Output:
	// +I[1, a]
	// -U[1, a]
	// +U[1, b]
	// {"before":null,"after":{"id":1,"name":"a"},"op":"c"}
	// {"before":{"id":1,"name":"a"},"after":null,"op":"d"}
	// {"before":null,"after":{"id":1,"name":"b"},"op":"c"}
}
