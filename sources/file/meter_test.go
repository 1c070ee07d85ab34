package file

import (
	"path/filepath"
	"testing"

	"github.com/etld/etld/pipeline/connector"
)

// The source counts the bytes it read from its files (connector.Meter),
// which etld_source_bytes_total exports.
func TestSourceCountsBytesRead(t *testing.T) {
	h := newHarness(t)
	a := "id,ts,temperature\na1,1,1\na2,2,1\n"
	b := "id,ts,temperature\nb1,3,1"
	h.write("d/a.csv", a)
	h.write("d/b.csv", b)
	s := h.open("path: "+filepath.Join(h.dir, "d", "*.csv")+"\nformat: {type: csv, header: true}", sensorSchema)
	var m connector.Meter = s
	if n := m.Bytes(); n != 0 {
		t.Errorf("Bytes before reading = %d, want 0", n)
	}
	if _, err := readAll(s, 1); err != nil {
		t.Fatal(err)
	}
	if got, want := m.Bytes(), int64(len(a)+len(b)); got != want {
		t.Errorf("Bytes = %d, want %d (both files, headers included)", got, want)
	}
}
