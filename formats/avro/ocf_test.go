package avro

import (
	"bytes"
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2/ocf"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// fileTypes is a column of every type the avro format maps, scalar and
// nested, nullable and NOT NULL.
func fileTypes(t testing.TB) row.Schema {
	return testenv.Schema(t, "b BOOLEAN", "ti TINYINT", "si SMALLINT", "i INT NOT NULL", "n BIGINT", "f FLOAT", "d DOUBLE",
		"m DECIMAL(18,4)", "w DECIMAL(38,10)", "s STRING", "y BYTES", "dt DATE", "tm TIME(3)",
		"t3 TIMESTAMP(3)", "t6 TIMESTAMP(6)", "l3 TIMESTAMP_LTZ(3)", "l6 TIMESTAMP_LTZ(6) NOT NULL",
		"a ARRAY<BIGINT>", "an ARRAY<STRING NOT NULL> NOT NULL", "mp MAP<STRING, DOUBLE>", "aa ARRAY<ARRAY<STRING>>",
		"r ROW<x INT NOT NULL, s STRING, inner ROW<d DATE, z ARRAY<ROW<p DECIMAL(10,3), q TIMESTAMP(3)>>>>")
}

// fileRows draws rows of schema whose values Avro keeps exactly: a
// TIMESTAMP(3)'s in whole milliseconds.
func fileRows(rng *rand.Rand, schema row.Schema, n int) []row.Row {
	rows := make([]row.Row, n)
	for k := range rows {
		r := make(row.Row, schema.Len())
		for i, f := range schema.Fields {
			r[i] = millisOnly(randomValue(rng, f.Type), f.Type)
		}
		rows[k] = r
	}
	return rows
}

// millisOnly cuts the timestamps of precision 3 in v to milliseconds.
func millisOnly(v row.Value, t row.Type) row.Value {
	if v.IsNull() {
		return v
	}
	switch t.ID {
	case row.Timestamp, row.TimestampLTZ:
		if t.Precision > 3 {
			return v
		}
		us := v.Micros() - ((v.Micros()%1000)+1000)%1000
		if t.ID == row.Timestamp {
			return row.TimestampValue(us)
		}
		return row.TimestampLTZValue(us)
	case row.Array:
		items := make([]row.Value, v.Len())
		for i, x := range v.Items() {
			items[i] = millisOnly(x, t.Elem())
		}
		return row.ArrayValue(items)
	case row.Struct:
		items := make([]row.Value, v.Len())
		for i, x := range v.Items() {
			items[i] = millisOnly(x, t.Fields()[i].Type)
		}
		return row.StructValue(items)
	}
	return v
}

func fileBulk(t testing.TB, schema row.Schema, o FileOptions) formattest.Bulk {
	enc, err := NewFileEncoder(o, schema)
	if err != nil {
		t.Fatal(err)
	}
	return formattest.Bulk{Schema: schema, Encoder: enc, Decoder: func() connector.BulkDecoder {
		d, err := NewFileDecoder(FileOptions{}, schema)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}}
}

// TestFileRoundTrip writes every type with each codec in small blocks
// cut into several pieces, resumed after a checkpoint every few rows: the
// file is byte-identical to one written at once, reads back as written,
// and a projection reads the columns picked.
func TestFileRoundTrip(t *testing.T) {
	schema := fileTypes(t)
	defer func(n int64) { PieceBytes = n }(PieceBytes)
	PieceBytes = 2000
	for _, codec := range []string{"snappy", "deflate", "zstandard", "null"} {
		t.Run(codec, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, uint64(len(codec))))
			c := fileBulk(t, schema, FileOptions{Codec: codec, BlockSize: 700})
			rows := fileRows(rng, schema, 300)
			formattest.BulkRoundTrip(t, c, rows, 7)
			file := formattest.WriteFile(t, c.Encoder, rows, 0)
			fr, err := c.Decoder().OpenFile(bytes.NewReader(file), int64(len(file)), "x.avro")
			if err != nil {
				t.Fatal(err)
			}
			if len(fr.Groups()) < 3 {
				t.Fatalf("%d pieces, want several", len(fr.Groups()))
			}
			// A read from a row inside a piece (a restored position)
			// gives the rows from there on.
			first := fr.Groups()[0]
			var got []row.Row
			err = fr.ReadGroup(context.Background(), 1, 5, 4, func(b *row.Batch) error {
				for _, ch := range b.Changes {
					got = append(got, ch.Row)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(got)) != fr.Groups()[1]-5 || !row.Equal(got[0][3], rows[first+5][3]) {
				t.Fatalf("piece 1 from row 5: %d rows, first %v, want %d rows from %v", len(got), got[0], fr.Groups()[1]-5, rows[first+5])
			}
		})
	}
}

// TestFileHambaReads: hamba/avro's own reader of container files reads
// what the encoder writes, with each codec it has, to the values written.
func TestFileHambaReads(t *testing.T) {
	schema := testenv.Schema(t, "id BIGINT NOT NULL", "s STRING", "t TIMESTAMP(3)", "a ARRAY<INT>")
	at := time.Date(2026, 12, 6, 10, 0, 0, 123000000, time.UTC)
	for _, codec := range []string{"snappy", "deflate", "zstandard", "null"} {
		enc, err := NewFileEncoder(FileOptions{Codec: codec, BlockSize: 64}, schema)
		if err != nil {
			t.Fatal(err)
		}
		var rows []row.Row
		for i := range 50 {
			rows = append(rows, row.Row{row.BigIntValue(int64(i)), row.StringValue(strings.Repeat("x", i%5)),
				row.TimestampValue(at.UnixMicro() + int64(i)*1000), row.ArrayValue([]row.Value{row.IntValue(int32(i))})})
		}
		file := formattest.WriteFile(t, enc, rows, 0)
		dec, err := ocf.NewDecoder(bytes.NewReader(file))
		if err != nil {
			t.Fatalf("%s: hamba: %v", codec, err)
		}
		n := 0
		for dec.HasNext() {
			var got struct {
				ID int64      `avro:"id"`
				S  *string    `avro:"s"`
				T  *time.Time `avro:"t"`
				A  *[]*int32  `avro:"a"`
			}
			if err := dec.Decode(&got); err != nil {
				t.Fatalf("%s: row %d: %v", codec, n+1, err)
			}
			if got.ID != int64(n) || *got.S != strings.Repeat("x", n%5) || !got.T.Equal(at.Add(time.Duration(n)*time.Millisecond)) || *(*got.A)[0] != int32(n) {
				t.Fatalf("%s: row %d: %+v", codec, n+1, got)
			}
			n++
		}
		if dec.Error() != nil || n != len(rows) {
			t.Fatalf("%s: hamba read %d rows of %d: %v", codec, n, len(rows), dec.Error())
		}
	}
}

// TestFileReadsHambaWriter: a file hamba/avro's writer made, of a schema
// that is not the table's (a field the table lacks, one the table has
// and the file does not, an enum, int widened to long), in blocks of its
// own cutting, reads into the table.
func TestFileReadsHambaWriter(t *testing.T) {
	schema := `{"type":"record","name":"Reading","namespace":"x","fields":[
		{"name":"sensor","type":{"type":"enum","name":"S","symbols":["a","b"]}},
		{"name":"extra","type":{"type":"map","values":"string"}},
		{"name":"n","type":"int"},
		{"name":"at","type":{"type":"long","logicalType":"timestamp-micros"}}]}`
	for _, codec := range []ocf.CodecName{ocf.Null, ocf.Deflate, ocf.Snappy, ocf.ZStandard} {
		var buf bytes.Buffer
		enc, err := ocf.NewEncoder(schema, &buf, ocf.WithCodec(codec), ocf.WithBlockLength(7))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 40 {
			if err := enc.Encode(map[string]any{"sensor": []string{"a", "b"}[i%2], "extra": map[string]string{"k": "v"}, "n": int32(i),
				"at": time.UnixMicro(int64(i) * 1000001).UTC()}); err != nil {
				t.Fatal(err)
			}
		}
		if err := enc.Close(); err != nil {
			t.Fatal(err)
		}
		table := testenv.Schema(t, "n BIGINT", "sensor STRING", "at TIMESTAMP_LTZ(6)", "missing DOUBLE")
		dec, err := NewFileDecoder(FileOptions{}, table)
		if err != nil {
			t.Fatal(err)
		}
		got := formattest.ReadFile(t, dec, buf.Bytes())
		if len(got) != 40 {
			t.Fatalf("%s: %d rows", codec, len(got))
		}
		for i, r := range got {
			want := row.Row{row.BigIntValue(int64(i)), row.StringValue([]string{"a", "b"}[i%2]), row.TimestampLTZValue(int64(i) * 1000001), row.NullValue}
			if !row.Equal(row.StructValue(r), row.StructValue(want)) {
				t.Fatalf("%s: row %d: %v, want %v", codec, i+1, r, want)
			}
		}
	}
}

// TestFileErrors: files that are not container files, or that a table
// cannot read, fail naming the file and where in it.
func TestFileErrors(t *testing.T) {
	schema := testenv.Schema(t, "id BIGINT NOT NULL", "s STRING")
	enc, err := NewFileEncoder(FileOptions{Codec: "null", BlockSize: 10}, schema)
	if err != nil {
		t.Fatal(err)
	}
	var rows []row.Row
	for i := range 20 {
		rows = append(rows, row.Row{row.BigIntValue(int64(i)), row.StringValue("abc")})
	}
	good := formattest.WriteFile(t, enc, rows, 0)
	header := len(enc.header)
	torn := bytes.Clone(good)
	torn[len(torn)-3] ^= 0xff // inside the last sync marker
	datum := bytes.Clone(good)
	datum[header+4] = 0x7e // the first datum's string is now 63 bytes long
	for name, tc := range map[string]struct {
		file  []byte
		table row.Schema
		msg   string
	}{
		"csv":       {[]byte("id,s\n1,a\n"), schema, "f.avro: not an Avro object container file"},
		"cut":       {good[:len(good)-5], schema, "f.avro: the block at byte "},
		"sync":      {torn, schema, "does not end with the file's sync marker"},
		"datum":     {datum, schema, "f.avro: the block at byte " + strconv.Itoa(header) + ": datum 1 (row 1 of the piece): column s: at byte 2: a length of 63"},
		"resolving": {good, testenv.Schema(t, "id BIGINT", "gone INT NOT NULL"), "f.avro: the file's schema cannot be read into the table's columns: column gone is NOT NULL"},
	} {
		dec, err := NewFileDecoder(FileOptions{}, tc.table)
		if err != nil {
			t.Fatal(err)
		}
		fr, err := dec.OpenFile(bytes.NewReader(tc.file), int64(len(tc.file)), "f.avro")
		if err == nil {
			for g := range fr.Groups() {
				if err = fr.ReadGroup(context.Background(), g, 0, 10, func(*row.Batch) error { return nil }); err != nil {
					break
				}
			}
		}
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %q", name, err, tc.msg)
		}
	}
	if _, err := NewFileDecoder(FileOptions{Codec: "lz4"}, schema); err == nil {
		t.Error("a reader took codec lz4")
	}
	if _, err := NewFileEncoder(FileOptions{Codec: "xz"}, schema); err == nil {
		t.Error("the writer took codec xz")
	}
}

// FuzzFileRead reads random bytes as container files of every type:
// blocks after the header etld writes for a codec (codec%4), or, with
// codec past 0x80, a whole file, header and all; files etld wrote and
// blocks that decompress past the bound among the seeds. An error that
// names the file, or rows, and never a panic.
//
// The inputs are kept small on purpose: the fuzzer minimizes each input
// that finds new code by trying to remove every run of its bytes (the
// square of its length), so that whole files of a 2 KiB schema, as the
// seeds were, held it minimizing for its minute each time and it ran a
// few dozen inputs a minute. The header of every codec is written once,
// and the blocks are what it mutates.
func FuzzFileRead(f *testing.F) {
	schema := fileTypes(f)
	rng := rand.New(rand.NewPCG(9, 9))
	codecs := []string{"null", "snappy", "deflate", "zstandard"}
	var headers [][]byte
	for i, codec := range codecs {
		enc, err := NewFileEncoder(FileOptions{Codec: codec, BlockSize: 300}, schema)
		if err != nil {
			f.Fatal(err)
		}
		headers = append(headers, enc.header)
		good := formattest.WriteFile(f, enc, fileRows(rng, schema, 2), 0)
		f.Add(byte(i), good[len(enc.header):])
	}
	// Blocks that say they hold more than the bound, 4 MiB of zeros,
	// with the codecs that compress them to a few bytes.
	for _, codec := range []string{"zstandard", "deflate"} {
		bomb, at := bombFile(f, schema, codec, 4<<20, func(b []byte) []byte {
			out, err := blockCodecs[codec].compress(nil, b)
			if err != nil {
				f.Fatal(err)
			}
			return out
		})
		f.Add(byte(slices.Index(codecs, codec)), bomb[at:])
	}
	f.Add(byte(0x80), []byte("Obj\x01\x00"))
	f.Add(byte(0x80), []byte("id,name\n1,a\n"))
	// A whole file of a small schema, for the header's reading.
	small := appendHeader(nil, map[string]string{"avro.schema": `{"type":"record","name":"r","fields":[{"name":"i","type":"int"}]}`, "avro.codec": "null"}, [syncSize]byte{})
	small = append(appendLong(appendLong(small, 1), 1), 0x02)
	f.Add(byte(0x80), append(small, make([]byte, syncSize)...))
	// A bound of 1 MiB: a block that passes it fails, whatever its
	// codec, rather than taking the memory. One decoder reads every
	// input, as a source's reads every file: parsing the table's and
	// the header's schemas afresh took most of an input's time.
	dec, err := NewFileDecoder(FileOptions{MaxBlockBytes: 1 << 20}, schema)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, codec byte, blocks []byte) {
		data := blocks
		if codec < 0x80 {
			h := headers[int(codec)%len(headers)]
			data = append(bytes.Clone(h), blocks...)
		}
		fr, err := dec.OpenFile(bytes.NewReader(data), int64(len(data)), "fuzz.avro")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.avro: ") {
				t.Fatalf("an error without the file's name: %v", err)
			}
			return
		}
		for g := range fr.Groups() {
			err := fr.ReadGroup(context.Background(), g, 0, 5, func(*row.Batch) error { return nil })
			if err != nil && !strings.HasPrefix(err.Error(), "fuzz.avro: ") && err != context.Canceled {
				t.Fatalf("an error without the file's name: %v", err)
			}
		}
	})
}

// countingReaderAt counts the reads through it and the bytes they ask.
type countingReaderAt struct {
	r            *bytes.Reader
	reads, bytes int
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	c.bytes += len(p)
	return c.r.ReadAt(p, off)
}

// TestOpenReads opens files of small and of large blocks through a
// reader that counts its reads, each a request on object storage: the
// blocks are walked in reads of about 1 MiB, and a block larger than
// that takes one read, not one for its start and one for its end.
func TestOpenReads(t *testing.T) {
	schema := testenv.Schema(t, "k BIGINT NOT NULL", "s STRING NOT NULL")
	for _, c := range []struct {
		name      string
		blockSize int
		rows      int
		maxReads  func(blocks, mib int) int
	}{
		// 8 MiB in blocks of 64 KiB: a read a MiB, and the header's.
		{"small blocks", 64 << 10, 80_000, func(blocks, mib int) int { return mib + 2 }},
		// 12 MiB in blocks of 3 MiB: a read a block, and the header's.
		{"large blocks", 3 << 20, 120_000, func(blocks, mib int) int { return blocks + 2 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			enc, err := NewFileEncoder(FileOptions{Codec: "null", BlockSize: c.blockSize}, schema)
			if err != nil {
				t.Fatal(err)
			}
			rows := make([]row.Row, c.rows)
			for k := range rows {
				rows[k] = row.Row{row.BigIntValue(int64(k)), row.StringValue(strings.Repeat(strconv.Itoa(k)+"-", 100)[:100])}
			}
			file := formattest.WriteFile(t, enc, rows, 0)
			dec, err := NewFileDecoder(FileOptions{}, schema)
			if err != nil {
				t.Fatal(err)
			}
			r := &countingReaderAt{r: bytes.NewReader(file)}
			fr, err := dec.OpenFile(r, int64(len(file)), "x.avro")
			if err != nil {
				t.Fatal(err)
			}
			var total int64
			for _, n := range fr.Groups() {
				total += n
			}
			if total != int64(c.rows) {
				t.Fatalf("pieces of %d rows, want %d", total, c.rows)
			}
			blocks := (len(file) + c.blockSize - 1) / c.blockSize
			mib := (len(file) + 1<<20 - 1) >> 20
			if max := c.maxReads(blocks, mib); r.reads > max {
				t.Errorf("%d reads (%d bytes) to open %d bytes in about %d blocks, want at most %d", r.reads, r.bytes, len(file), blocks, max)
			}
		})
	}
}
