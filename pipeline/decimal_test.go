package pipeline_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDecimalTextAndNarrowCast runs DECIMAL values through a transform
// into csv and json files: the files carry Java's BigDecimal.toString
// form as Flink's csv and json formats write it (0E-7, 2.50000E-7), the
// json option encode_decimal_as_plain_number gives the plain form, CAST
// AS STRING is plain, and a CAST to a DECIMAL too narrow gives NULL
// instead of stopping the run (a text too wide is an error: TRY_CAST).
func TestDecimalTextAndNarrowCast(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("a,99999999.99,2.5E-7,1.5\nb,12.30,0.000001,123\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := func(name string) string { return filepath.Join(dir, name) }
	runFile(t, dir, fmt.Sprintf(`version: 1
name: dec
sources:
  - name: src
    type: file
    path: %s
    schema:
      - k STRING
      - d DECIMAL(10, 2)
      - t DOUBLE
      - s STRING
transforms:
  - name: q
    sql: |
      SELECT k,
             CAST(0 AS DECIMAL(10, 7)) AS z,
             CAST(d AS DECIMAL(5, 1)) AS narrow,
             CAST(t AS DECIMAL(18, 12)) AS tiny,
             TRY_CAST(s AS DECIMAL(3, 1)) AS txt,
             CAST(CAST(0 AS DECIMAL(10, 7)) AS STRING) AS ztext
      FROM src
sinks:
  - name: csv
    from: q
    type: file
    path: %s
  - name: json
    from: q
    type: file
    path: %s
    format: json
  - name: plain
    from: q
    type: file
    path: %s
    format: {type: json, encode_decimal_as_plain_number: true}
`, in, out("out.csv"), out("out.json"), out("plain.json")))
	tests := []struct {
		file string
		want []string
	}{
		{"out.csv", []string{
			"a,0E-7,,2.50000E-7,1.5,0.0000000",
			"b,0E-7,12.3,0.000001000000,,0.0000000",
		}},
		{"out.json", []string{
			`{"k":"a","z":0E-7,"narrow":null,"tiny":2.50000E-7,"txt":1.5,"ztext":"0.0000000"}`,
			`{"k":"b","z":0E-7,"narrow":12.3,"tiny":0.000001000000,"txt":null,"ztext":"0.0000000"}`,
		}},
		{"plain.json", []string{
			`{"k":"a","z":0.0000000,"narrow":null,"tiny":0.000000250000,"txt":1.5,"ztext":"0.0000000"}`,
			`{"k":"b","z":0.0000000,"narrow":12.3,"tiny":0.000001000000,"txt":null,"ztext":"0.0000000"}`,
		}},
	}
	for _, tc := range tests {
		if got := readLines(t, out(tc.file)); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", tc.file, got, tc.want)
		}
	}
}
