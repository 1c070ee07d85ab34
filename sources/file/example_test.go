package file_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/etld/etld/formats"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sources/file"
)

// A CSV file read in batches; a bad record goes to the
// on_error policy with its file:line, here one that skips it.
func Example() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "sensor.csv")
	os.WriteFile(path, []byte("s1,20.5\ns2,hot\ns3,-1\n"), 0o644)

	r := connector.NewRegistry()
	formats.Register(r)
	src, err := file.New(file.Config{Path: path}, connector.SourceEnv{
		Name: "sensor",
		Schema: row.NewSchema(
			row.Field{Name: "id", Type: row.Of(row.String)},
			row.Field{Name: "temperature", Type: row.Of(row.Double)},
		),
		Formats: r,
		Reject: func(bad connector.BadRecord) error {
			fmt.Printf("skipped line %s: %v\n", filepath.Base(bad.Position), bad.Err)
			return nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	if err := src.Open(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer src.Close(ctx)
	for {
		b, err := src.Read(ctx, 1024)
		if b != nil {
			fmt.Print(b)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	// Output:
	// skipped line sensor.csv:2: column temperature: cannot parse "hot" as DOUBLE
	// +I[s1, 20.5]
	// +I[s3, -1.0]
}
