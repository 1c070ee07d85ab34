package pipeline_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
			"a,0,,2.5E-7,1.5,0.0000000", // Flink's csv and json strip trailing zeros
			"b,0,12.3,0.000001,,0.0000000",
		}},
		{"out.json", []string{
			`{"k":"a","z":0,"narrow":null,"tiny":2.5E-7,"txt":1.5,"ztext":"0.0000000"}`,
			`{"k":"b","z":0,"narrow":12.3,"tiny":0.000001,"txt":null,"ztext":"0.0000000"}`,
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

// TestDecimal38 runs DECIMAL up to 38 digits end to end: a DECIMAL(20, 12)
// column is accepted, 99999999.99² is DECIMAL(21, 4), d / 3 is DECIMAL(21,
// 13), SUM over DECIMAL(10, 2) is DECIMAL(38, 2) and AVG DECIMAL(38, 6), a
// wide value groups and orders, and a result past 38 digits is NULL; the csv
// file carries Flink's text.
func TestDecimal38(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	data := "a,99999999.99,12345678.123456789012\n" +
		"a,10.25,0.000000000001\n" +
		"b,99999999.99,-12345678.123456789012\n"
	if err := os.WriteFile(in, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	out := func(name string) string { return filepath.Join(dir, name) }
	runFile(t, dir, fmt.Sprintf(`version: 1
name: dec38
execution: batch
sources:
  - name: src
    type: file
    path: %s
    schema:
      - k STRING
      - d DECIMAL(10, 2)
      - w DECIMAL(20, 12)
transforms:
  - name: rows
    sql: |
      SELECT k, d * d AS sq, d / 3 AS third, w * w AS ww,
             CAST(w AS DECIMAL(38, 0)) * CAST('99999999999999999999999999999999' AS DECIMAL(32, 0)) AS past
      FROM src
  - name: sums
    sql: |
      SELECT k, SUM(d) AS sd, AVG(d) AS ad, SUM(w) AS sw, MAX(w) AS mw, COUNT(*) AS n
      FROM src GROUP BY k
sinks:
  - name: rows
    from: rows
    type: file
    path: %s
  - name: sums
    from: sums
    type: file
    path: %s
`, in, out("rows.csv"), out("sums.csv")))
	tests := []struct {
		file string
		want []string
	}{
		{"rows.csv", []string{
			"a,105.0625,3.4166666666667,0,0", // w * w is DECIMAL(38, 21): 1E-24 rounds to 0
			"a,9999999998000000.0001,33333333.33,152415768327999.543353759025153483936,",
			"b,9999999998000000.0001,33333333.33,152415768327999.543353759025153483936,",
		}},
		{"sums.csv", []string{
			"a,100000010.24,50000005.12,12345678.123456789013,12345678.123456789012,2",
			"b,99999999.99,99999999.99,-12345678.123456789012,-12345678.123456789012,1",
		}},
	}
	for _, tc := range tests {
		got := readLines(t, out(tc.file))
		slices.Sort(got)
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", tc.file, got, tc.want)
		}
	}
}

// TestDecimal38Aggregates: SUM, AVG, MIN, MAX over DECIMAL(10, 2),
// DECIMAL(38, 10) and DECIMAL(20, 12) give what Flink 2.3 gave for the
// same rows (SELECT SUM(q), AVG(q), ... in batch mode), but for SUM(w):
// its total passes 38 digits, which etld keeps NULL where Flink's sum
// restarts from the next value (Flink printed 1).
func TestDecimal38Aggregates(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	data := "10.25,1234567890123456789012345678.0123456789,99999999999999999999999999999999999999,12345678.123456789012\n" +
		"0.01,-1.0000000001,1,0.000000000001\n" +
		"1.00,2.5,1,-5.5\n"
	if err := os.WriteFile(in, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.csv")
	runFile(t, dir, fmt.Sprintf(`version: 1
name: dec38agg
execution: batch
sources:
  - name: t
    type: file
    path: %s
    schema: ["q DECIMAL(10, 2)", "w2 DECIMAL(38, 10)", "w DECIMAL(38, 0)", "f DECIMAL(20, 12)"]
transforms:
  - name: a
    sql: SELECT SUM(q), AVG(q), AVG(w2), MIN(w2), SUM(w2), SUM(w), AVG(f), MAX(f) FROM t
sinks:
  - name: out
    from: a
    type: file
    path: %s
`, in, out))
	want := "11.26,3.753333,411522630041152263004115226.5041152263,-1.0000000001,1234567890123456789012345679.5123456788,,4115224.207818929671,12345678.123456789012"
	if got := readLines(t, out); len(got) != 1 || got[0] != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
