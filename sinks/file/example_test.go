package file_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/etld/etld/formats"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sinks/file"
)

// An updating result (a count per id) written in retract mode: every
// change is a record, its kind in the op column first.
func Example() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "out", "counts.csv")

	r := connector.NewRegistry()
	formats.Register(r)
	sink, err := file.New(file.Config{Path: path}, connector.SinkEnv{Name: "counts", Formats: r})
	if err != nil {
		fmt.Println(err)
		return
	}
	schema := row.NewSchema(
		row.Field{Name: "id", Type: row.Of(row.String)},
		row.Field{Name: "readings", Type: row.Of(row.BigInt)},
	)
	if err := sink.Bind(connector.SinkInput{Schema: schema, Mode: connector.Retract}); err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	if err := sink.Open(ctx); err != nil {
		fmt.Println(err)
		return
	}
	b := row.NewBatch(3, 2)
	for _, c := range []struct {
		kind row.Kind
		n    int64
	}{{row.Insert, 1}, {row.UpdateBefore, 1}, {row.UpdateAfter, 2}} {
		r := b.NewRow()
		r[0], r[1] = row.StringValue("s1"), row.BigIntValue(c.n)
		b.Append(c.kind, r)
	}
	if err := sink.Write(ctx, b); err != nil {
		fmt.Println(err)
		return
	}
	if err := sink.Close(ctx); err != nil {
		fmt.Println(err)
		return
	}
	out, _ := os.ReadFile(path)
	fmt.Print(string(out))
	// Output:
	// +I,s1,1
	// -U,s1,1
	// +U,s1,2
}
