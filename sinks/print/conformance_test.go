package print

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/connector/conntest"
	"github.com/etld/etld/pipeline/row"
)

// TestConformance runs the connector kit on the print sink, printing to a
// buffer: each target is one buffer, read back line by line.
func TestConformance(t *testing.T) {
	conntest.RunSink(t, conntest.Sink{
		Mode: connector.Append,
		Target: func(t *testing.T) conntest.Target {
			var out bytes.Buffer
			return conntest.Target{
				Sink: func(t *testing.T, _ string) connector.Sink {
					s, err := New(Config{}, connector.SinkEnv{Name: "out"})
					if err != nil {
						t.Fatal(err)
					}
					s.out = &out
					return s
				},
				Landed: func(t *testing.T) []row.Row { return printedRows(t, out.String()) },
			}
		},
	})
}

// printedRows reads lines +I[id, v] of conntest.Schema back into rows.
func printedRows(t *testing.T, text string) []row.Row {
	t.Helper()
	var rows []row.Row
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if line == "" {
			continue
		}
		inner, ok := strings.CutPrefix(line, "+I[")
		id, v, ok2 := strings.Cut(strings.TrimSuffix(inner, "]"), ", ")
		n, err := strconv.ParseInt(id, 10, 64)
		if !ok || !ok2 || err != nil {
			t.Fatalf("printed line %q is not +I[id, v]", line)
		}
		rows = append(rows, conntest.Row(n, v))
	}
	return rows
}
