package parquet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go/format"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/row"
)

// flatTypes is a column of every scalar type, nullable and NOT NULL,
// and a nested one among them, whose chunks parquet-go writes between
// etld's.
func flatTypes(t testing.TB) row.Schema {
	return testenv.Schema(t,
		"b BOOLEAN", "ti TINYINT", "si SMALLINT", "i INT NOT NULL", "n BIGINT", "f FLOAT", "d DOUBLE",
		"m4 DECIMAL(9,2)", "m DECIMAL(18,4) NOT NULL", "mw DECIMAL(38,10)", "mx DECIMAL(20,0)",
		"s STRING", "a ARRAY<INT>", "y BYTES", "dt DATE", "tm TIME(3)",
		"t3 TIMESTAMP(3)", "t6 TIMESTAMP(6)", "t9 TIMESTAMP(9)", "l3 TIMESTAMP_LTZ(3)", "l6 TIMESTAMP_LTZ(6) NOT NULL",
		"z BIGINT", "nd DOUBLE",
	)
}

// flatRows draws n rows of flatTypes; column z is NULL in the first 40,
// so that a row group of that size has a column of NULLs only, and nd
// NaN or NULL.
func flatRows(rng *rand.Rand, schema row.Schema, n int) []row.Row {
	rows := randomRows(rng, schema, n)
	z, nd := schema.Len()-2, schema.Len()-1
	for k := range rows {
		if k < 40 {
			rows[k][z] = row.NullValue
		}
		if rows[k][nd] = row.DoubleValue(math.NaN()); k%3 == 0 {
			rows[k][nd] = row.NullValue
		}
	}
	return rows
}

// writeTemp writes rows with enc into a file of the test's.
func writeTemp(t *testing.T, enc *Encoder, rows []row.Row) (string, []byte) {
	t.Helper()
	file := formattest.WriteFile(t, enc, rows, 0)
	path := filepath.Join(t.TempDir(), "etld.parquet")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, file
}

// TestStatisticsByOthers writes every scalar type in row groups of 40
// rows, and has testdata/read.py check each group's statistics: pyarrow
// reads the least and greatest value and the NULL count of the group's
// values, and DuckDB, which skips the row groups whose bounds leave a
// value out, counts as many rows equal to each group's bounds as
// pyarrow does.
func TestStatisticsByOthers(t *testing.T) {
	py := testenv.Python(t)
	schema := flatTypes(t)
	for _, codec := range []string{"snappy", "zstd"} {
		t.Run(codec, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(21, uint64(len(codec))))
			enc, err := NewEncoder(Options{RowGroupSize: 40, Compression: codec}, schema)
			if err != nil {
				t.Fatal(err)
			}
			path, _ := writeTemp(t, enc, flatRows(rng, schema, 200))
			script, err := filepath.Abs(filepath.Join(testdataDir(), "read.py"))
			if err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(py, script, "stats", path).Output()
			if err != nil {
				t.Fatalf("read.py stats: %v\n%s", err, stderrOf(err))
			}
			var res []json.RawMessage
			var checks int
			var problems []string
			if err := json.Unmarshal(out, &res); err != nil || len(res) != 2 {
				t.Fatalf("read.py stats printed %s: %v", out, err)
			}
			if err := json.Unmarshal(res[0], &checks); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(res[1], &problems); err != nil {
				t.Fatal(err)
			}
			// 5 groups of 22 scalar columns.
			if checks != 5*22 {
				t.Errorf("%d columns checked, want %d", checks, 5*22)
			}
			for _, p := range problems {
				t.Error(p)
			}
		})
	}
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// TestDictionaryFallback writes a STRING column whose distinct values
// pass the dictionary's bound in the first row group: that chunk has a
// dictionary page, dictionary-encoded data pages and then PLAIN ones
// (the second group, of repeated values, none PLAIN), and etld, pyarrow
// and DuckDB read every value back.
func TestDictionaryFallback(t *testing.T) {
	schema := testenv.Schema(t, "k BIGINT NOT NULL", "s STRING")
	const groupRows = 3000
	var rows []row.Row
	for k := range 2 * groupRows {
		var s row.Value
		switch {
		case k%97 == 0:
			s = row.NullValue
		case k < groupRows:
			s = row.StringValue(fmt.Sprintf("%06d %s", k, strings.Repeat("x", 1000)))
		default:
			s = row.StringValue(fmt.Sprintf("repeated %d", k%10))
		}
		rows = append(rows, row.Row{row.BigIntValue(int64(k)), s})
	}
	c := bulk(t, schema, Options{RowGroupSize: groupRows})
	path, file := writeTemp(t, c.Encoder.(*Encoder), rows)
	md, err := readFooter(file)
	if err != nil {
		t.Fatal(err)
	}
	pages := func(g int) map[string]int32 {
		m := map[string]int32{}
		for _, s := range md.RowGroups[g].Columns[1].MetaData.EncodingStats {
			m[s.PageType.String()+" "+s.Encoding.String()] += s.Count
		}
		return m
	}
	first, second := pages(0), pages(1)
	if first["DICTIONARY_PAGE PLAIN"] != 1 || first["DATA_PAGE_V2 RLE_DICTIONARY"] == 0 || first["DATA_PAGE_V2 PLAIN"] == 0 {
		t.Errorf("row group 1's pages: %v, want a dictionary, dictionary-encoded pages, then PLAIN ones", first)
	}
	if second["DICTIONARY_PAGE PLAIN"] != 1 || second["DATA_PAGE_V2 RLE_DICTIONARY"] == 0 || second["DATA_PAGE_V2 PLAIN"] != 0 {
		t.Errorf("row group 2's pages: %v, want a dictionary and dictionary-encoded pages only", second)
	}
	got := formattest.ReadFile(t, c.Decoder(), file)
	for k := range rows {
		if !row.Equal(got[k][1], rows[k][1]) {
			t.Fatalf("etld read row %d: %v, wrote %v", k+1, got[k][1], rows[k][1])
		}
	}
	for _, reader := range []string{"pyarrow", "duckdb"} {
		_, others := ReadWithPython(t, reader, path, false)
		if len(others) != len(rows) {
			t.Fatalf("%s read %d rows, want %d", reader, len(others), len(rows))
		}
		for k, r := range rows {
			if want := normalize(t, formattest.Render(r[1], schema.Fields[1].Type)); !equalJSON(others[k][1], want) {
				t.Fatalf("%s read row %d: %v, wrote %v", reader, k+1, others[k][1], want)
			}
		}
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// TestEmptyFileByOthers writes a file of no rows: pyarrow and DuckDB
// read its columns and no rows.
func TestEmptyFileByOthers(t *testing.T) {
	schema := flatTypes(t)
	enc, err := NewEncoder(Options{}, schema)
	if err != nil {
		t.Fatal(err)
	}
	path, _ := writeTemp(t, enc, nil)
	for _, reader := range []string{"pyarrow", "duckdb"} {
		names, rows := ReadWithPython(t, reader, path, false)
		if strings.Join(names, ",") != strings.Join(schema.Names(), ",") || len(rows) != 0 {
			t.Errorf("%s read columns %v and %d rows, want %v and none", reader, names, len(rows), schema.Names())
		}
	}
}

// TestBounds checks the bounds of values no random table is sure to
// hold: NaNs left out of a float's (and no bounds for NaNs alone), zero
// bounds as -0 and +0, the empty string a bound, two's complement bytes
// ordered by sign, the column index's long strings cut and still
// bounding.
func TestBounds(t *testing.T) {
	nan := math.NaN()
	d := &column{phys: physDouble, f64: []float64{nan, 0, 2.5, nan}}
	lo, hi, ok := d.bounds(0, 4)
	if !ok || math.Float64frombits(le64(lo)) != 0 || !math.Signbit(math.Float64frombits(le64(lo))) || math.Float64frombits(le64(hi)) != 2.5 {
		t.Errorf("bounds of NaN, 0, 2.5, NaN: %v %v %v, want -0 and 2.5", lo, hi, ok)
	}
	if _, _, ok := d.bounds(0, 1); ok {
		t.Errorf("a NaN alone has bounds")
	}
	// A page of NaNs alone: NaN bounds in the column index, none in the
	// chunk's statistics.
	nans := &column{name: "d", phys: physDouble, rows: 2, f64: []float64{nan, nan}}
	_, out, err := nans.encode(nil, 4, codecs["none"]())
	if err != nil {
		t.Fatal(err)
	}
	if out.chunk.MetaData.Statistics.MinValue != nil || len(out.ci.MinValues) != 1 || !math.IsNaN(math.Float64frombits(le64(out.ci.MinValues[0]))) || !math.IsNaN(math.Float64frombits(le64(out.ci.MaxValues[0]))) {
		t.Errorf("NaNs alone: statistics %+v, column index %+v", out.chunk.MetaData.Statistics, out.ci)
	}
	z := &column{phys: physFloat, f32: []float32{float32(math.Copysign(0, -1)), 0}}
	if lo, hi, _ := z.bounds(0, 2); !math.Signbit(float64(math.Float32frombits(uint32(le64(append(lo, 0, 0, 0, 0)))))) || math.Signbit(float64(math.Float32frombits(uint32(le64(append(hi, 0, 0, 0, 0)))))) {
		t.Errorf("bounds of -0, +0: %v %v, want -0 and +0", lo, hi)
	}
	s := &column{phys: physBytes, strs: []string{"b", "", "\xff", "a"}}
	if lo, hi, _ := s.bounds(0, 4); lo == nil || len(lo) != 0 || string(hi) != "\xff" {
		t.Errorf("string bounds %q %q, want \"\" and \\xff", lo, hi)
	}
	f := &column{phys: physFixed, width: 2, fixed: []byte{0x00, 0x05, 0xff, 0xfe, 0x7f, 0x00, 0x80, 0x01}}
	if lo, hi, _ := f.bounds(0, 4); !bytes.Equal(lo, []byte{0x80, 0x01}) || !bytes.Equal(hi, []byte{0x7f, 0x00}) {
		t.Errorf("two's complement bounds %x %x, want 8001 and 7f00", lo, hi)
	}
	long := bytes.Repeat([]byte{'a'}, 100)
	if m := truncateMin(long); len(m) != indexBytes || bytes.Compare(m, long) > 0 {
		t.Errorf("least bound cut to %q", m)
	}
	if m := truncateMax(long); len(m) > indexBytes || bytes.Compare(m, long) < 0 {
		t.Errorf("greatest bound cut to %q", m)
	}
	ff := bytes.Repeat([]byte{0xff}, 100)
	if m := truncateMax(ff); bytes.Compare(m, ff) < 0 {
		t.Errorf("greatest bound of 0xff bytes cut to %x", m)
	}
	var st format.Statistics = stats(nil, nil, false, 3)
	if st.MinValue != nil || st.NullCount != 3 {
		t.Errorf("statistics of no values: %+v", st)
	}
}

func le64(b []byte) uint64 {
	var x uint64
	for i := len(b) - 1; i >= 0; i-- {
		x = x<<8 | uint64(b[i])
	}
	return x
}

// FuzzRoundTrip draws a table from its seed (a schema of scalar columns
// and a nested one now and then, nullable or not, rows, a row group size
// and a codec), writes it, resumed every few rows, and reads it back with
// etld's reader: the rows written, and a file byte-identical to one
// written at once. Each group's statistics bound its values.
func FuzzRoundTrip(f *testing.F) {
	for _, seed := range []uint64{1, 2, 3, 4, 5, 6, 7, 8} {
		f.Add(seed)
	}
	types := []string{"BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL(9,2)", "DECIMAL(18,4)",
		"DECIMAL(38,10)", "DECIMAL(22,3)", "STRING", "BYTES", "DATE", "TIME(3)", "TIMESTAMP(3)", "TIMESTAMP(6)", "TIMESTAMP(9)",
		"TIMESTAMP_LTZ(3)", "TIMESTAMP_LTZ(6)", "ARRAY<STRING>", "ROW<x INT, y STRING>"}
	codecs := []string{"snappy", "zstd", "gzip", "none"}
	f.Fuzz(func(t *testing.T, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, 17))
		var cols []string
		for i := range 1 + rng.IntN(6) {
			c := fmt.Sprintf("c%d %s", i, types[rng.IntN(len(types))])
			if rng.IntN(3) == 0 {
				c += " NOT NULL"
			}
			cols = append(cols, c)
		}
		schema := testenv.Schema(t, cols...)
		o := Options{RowGroupSize: 1 + rng.IntN(300), Compression: codecs[rng.IntN(len(codecs))]}
		rows := randomRows(rng, schema, rng.IntN(700))
		c := bulk(t, schema, o)
		formattest.BulkRoundTrip(t, c, rows, 1+rng.IntN(200))
		checkBounds(t, schema, rows, o.RowGroupSize, formattest.WriteFile(t, c.Encoder, rows, 0))
	})
}

// checkBounds checks each row group's statistics of its scalar columns
// against its rows: the NULL count, and bounds that hold every value
// (NaNs aside) and are values of the group.
func checkBounds(t *testing.T, schema row.Schema, rows []row.Row, groupRows int, file []byte) {
	t.Helper()
	md, err := readFooter(file)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := NewEncoder(Options{}, schema)
	if err != nil {
		t.Fatal(err)
	}
	for g, rg := range md.RowGroups {
		group := rows[g*groupRows : min(len(rows), (g+1)*groupRows)]
		leaf := 0
		for i, f := range schema.Fields {
			s := enc.cols[i]
			if f.Type.ID.Nested() {
				leaf += s.last - s.first
				continue
			}
			col := newColumn(f.Name, f.Type, 0)
			for _, r := range group {
				if err := s.add(r[i], col); err != nil {
					t.Fatal(err)
				}
			}
			st := rg.Columns[leaf].MetaData.Statistics
			leaf++
			if nulls := int64(col.rows - col.values()); st.NullCount != nulls {
				t.Fatalf("row group %d column %s: null count %d, want %d", g, f.Name, st.NullCount, nulls)
			}
			if st.MinValue == nil {
				continue // no values, or NaNs alone: checked by TestBounds
			}
			lo, hi, lowSeen, highSeen := st.MinValue, st.MaxValue, false, false
			for v := range col.values() {
				x, _, ok := col.bounds(v, v+1)
				if !ok {
					continue
				}
				if col.cmp(x, lo) < 0 || col.cmp(x, hi) > 0 {
					t.Fatalf("row group %d column %s: value %x outside the bounds %x %x", g, f.Name, x, lo, hi)
				}
				lowSeen = lowSeen || col.cmp(x, lo) == 0
				highSeen = highSeen || col.cmp(x, hi) == 0
			}
			if !lowSeen || !highSeen {
				t.Fatalf("row group %d column %s: bounds %x %x are not both values", g, f.Name, lo, hi)
			}
		}
	}
}

// TestPagesCut writes a row group of 300000 rows: its BIGINT chunks,
// one with NULLs, and its dictionary indexes are cut into pages of about
// 1 MiB of values (an index counted as 4 bytes), whose offset index
// counts the rows before each page, and etld and DuckDB read every value
// back.
func TestPagesCut(t *testing.T) {
	schema := testenv.Schema(t, "k BIGINT NOT NULL", "n BIGINT", "s STRING")
	const n = 300_000
	rows := make([]row.Row, n)
	for k := range rows {
		v := row.BigIntValue(int64(k % 1000))
		if k%3 == 0 {
			v = row.NullValue
		}
		rows[k] = row.Row{row.BigIntValue(int64(k)), v, row.StringValue(fmt.Sprint("v", k%50))}
	}
	c := bulk(t, schema, Options{RowGroupSize: n})
	path, file := writeTemp(t, c.Encoder.(*Encoder), rows)
	md, err := readFooter(file)
	if err != nil {
		t.Fatal(err)
	}
	// 8 bytes a value: 131072 a page; n's 131072nd value is in row
	// 196609 (the row before is NULL, and ends the page before). 4 bytes
	// an index: 262144 a page.
	wantRows := [][]int64{{0, 131072, 262144}, {0, 196609}, {0, 262144}}
	for i, cc := range md.RowGroups[0].Columns {
		var oi format.OffsetIndex
		if err := decodeAt(file, cc.OffsetIndexOffset, int64(cc.OffsetIndexLength), &oi); err != nil {
			t.Fatal(err)
		}
		var first []int64
		for _, p := range oi.PageLocations {
			first = append(first, p.FirstRowIndex)
		}
		if fmt.Sprint(first) != fmt.Sprint(wantRows[i]) {
			t.Errorf("column %s: pages from rows %v, want %v", schema.Fields[i].Name, first, wantRows[i])
		}
	}
	got := formattest.ReadFile(t, c.Decoder(), file)
	for k := range rows {
		for i := range rows[k] {
			if !row.Equal(got[k][i], rows[k][i]) {
				t.Fatalf("etld read row %d column %d: %v, wrote %v", k+1, i, got[k][i], rows[k][i])
			}
		}
	}
	// DuckDB sums the columns rather than printing 300000 rows.
	var sumK, sumN, countN int64
	for _, r := range rows {
		sumK += r[0].Int64()
		if !r[1].IsNull() {
			sumN, countN = sumN+r[1].Int64(), countN+1
		}
	}
	want := fmt.Sprintf("[%d, %d, %d, %d, 50]", n, sumK, countN, sumN)
	out, err := exec.Command(testenv.Python(t), "-c", `import sys, duckdb
print(list(duckdb.connect().execute("SELECT count(*), sum(k)::BIGINT, count(n), sum(n)::BIGINT, count(DISTINCT s) FROM read_parquet(?)", [sys.argv[1]]).fetchone()))`, path).Output()
	if err != nil {
		t.Fatalf("duckdb: %v\n%s", err, stderrOf(err))
	}
	if got := strings.TrimSpace(string(out)); got != want {
		t.Errorf("DuckDB sums %s, want %s", got, want)
	}
}
