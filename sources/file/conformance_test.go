package file

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/connector/conntest"
)

// TestConformance runs the connector kit on the file source, over inputs
// that put a position in every place a record can end: blank lines, CRLF,
// a last line without a newline, a header, quoted newlines, files of a
// glob (one empty) and raw lines. Each is resumed after every batch.
func TestConformance(t *testing.T) {
	var many strings.Builder
	for i := range 200 {
		fmt.Fprintf(&many, "s%d,%d,%d.5\n", i, i, i%40)
	}
	for _, tc := range []struct {
		name    string
		files   map[string]string
		path    string
		options string
		max     int
	}{
		{name: "csv", files: map[string]string{"a.csv": "s1,1,1\ns2,2,2\n\ns3,3,3\r\ns4,4,4"}, path: "a.csv", max: 1},
		{name: "header and quoted newlines", files: map[string]string{"a.csv": "id,ts,temperature\n\"s\n1\",1,1\n\"s\n\n2\",2,2\ns3,3,3\n"},
			path: "a.csv", options: "format: {type: csv, header: true}", max: 1},
		{name: "glob", files: map[string]string{
			"d/a.csv": "id,ts,temperature\na1,1,1\na2,2,2\n",
			"d/b.csv": "id,ts,temperature\n",
			"d/c.csv": "id,ts,temperature\nc1,3,3\nc2,4,4\nc3,5,5\n",
		}, path: "d/*.csv", options: "format: {type: csv, header: true}", max: 2},
		{name: "raw", files: map[string]string{"log": "a\n\nb\n"}, path: "log", options: "format: raw", max: 1},
		{name: "many", files: map[string]string{"many.csv": many.String()}, path: "many.csv", max: 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema := sensorSchema
			if strings.Contains(tc.options, "raw") {
				schema = "[line STRING]"
			}
			conntest.RunSource(t, conntest.Source{
				Max:     tc.max,
				Ordered: true,
				Input: func(t *testing.T) func(t *testing.T) connector.Source {
					h := newHarness(t)
					for name, content := range tc.files {
						h.write(name, content)
					}
					return func(t *testing.T) connector.Source {
						return h.mustBuild("path: "+filepath.Join(h.dir, tc.path)+"\n"+tc.options, schema)
					}
				},
				Broken: func(t *testing.T) connector.Source {
					h := newHarness(t)
					return h.mustBuild("path: "+filepath.Join(h.dir, "missing.csv"), sensorSchema)
				},
			})
		})
	}
}
