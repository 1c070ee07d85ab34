package csv_test

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/etld/etld/formats/csv"
	"github.com/etld/etld/pipeline/row"
)

// A file source's loop: split records (quoted line breaks included), check
// the header, decode the rest into a batch; a sink writes them back.
func Example() {
	schema := row.NewSchema(
		row.Field{Name: "id", Type: row.Of(row.String)},
		row.Field{Name: "ts", Type: row.Of(row.BigInt)},
		row.Field{Name: "note", Type: row.Of(row.String)},
	)
	// null_literal "" tells an empty field (NULL) from a quoted one ('');
	// without it, both are '' in a STRING column, as in Flink.
	opts := csv.Options{Header: true, NullLiteral: new("")}
	dec, _ := csv.NewDecoder(opts, schema)
	input := "id,ts,note\r\ns1,1700000000000,\"two\nlines\"\r\ns2,1700000000100,\r\ns3,1700000000200,\"\"\r\n"

	sc := bufio.NewScanner(strings.NewReader(input))
	sc.Split(dec.Split)
	b := row.NewBatch(8, schema.Len())
	for first := true; sc.Scan(); first = false {
		var err error
		if first && dec.HasHeader() {
			err = dec.DecodeHeader(sc.Bytes())
		} else {
			err = dec.Decode(sc.Bytes(), b)
		}
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Print(b)

	enc, _ := csv.NewEncoder(opts, schema)
	out := enc.AppendHeader(nil)
	for _, c := range b.Changes {
		out, _ = enc.Encode(out, c.Kind, c.Row)
	}
	fmt.Printf("%q\n", out)
	// Output:
	// +I[s1, 1700000000000, two
	// lines]
	// +I[s2, 1700000000100, null]
	// +I[s3, 1700000000200, ]
	// "id,ts,note\ns1,1700000000000,\"two\nlines\"\ns2,1700000000100,\ns3,1700000000200,\"\"\n"
}
