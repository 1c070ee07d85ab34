package file

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/connector/conntest"
	"github.com/etld/etld/pipeline/row"
)

// TestConformance runs the connector kit on the file sink writing CSV:
// each target is one file, read back line by line.
func TestConformance(t *testing.T) {
	mustBuild := func(t *testing.T, options string) connector.Sink {
		s, err := build(t, options)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	conntest.RunSink(t, conntest.Sink{
		Mode: connector.Append,
		Target: func(t *testing.T) conntest.Target {
			path := filepath.Join(t.TempDir(), "out.csv")
			return conntest.Target{
				Sink:   func(t *testing.T, _ string) connector.Sink { return mustBuild(t, "path: "+path) },
				Landed: func(t *testing.T) []row.Row { return csvRows(t, path) },
			}
		},
		// A directory cannot be opened as the file to write.
		Broken: func(t *testing.T) connector.Sink { return mustBuild(t, "path: "+t.TempDir()) },
		Crash:  func(t *testing.T, s connector.Sink) { crash(s.(*Sink)) },
	})
}

// csvRows reads the lines id,v of conntest.Schema back into rows; a file
// not there holds none.
func csvRows(t *testing.T, path string) []row.Row {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var rows []row.Row
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if line == "" {
			continue
		}
		id, v, ok := strings.Cut(line, ",")
		n, err := strconv.ParseInt(id, 10, 64)
		if !ok || err != nil {
			t.Fatalf("%s: line %q is not id,v", path, line)
		}
		rows = append(rows, conntest.Row(n, v))
	}
	return rows
}
