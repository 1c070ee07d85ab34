package parquet

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/row"
)

// fuzzFile is one of FuzzRead's files, cut where its pages end: the
// fuzzer mutates the pages under a footer written once.
type fuzzFile struct {
	dec *Decoder
	// tail is the footer, its length and the closing magic; pages is
	// how many bytes the pages take after the opening magic.
	tail  []byte
	pages int
}

// FuzzRead reads files etld wrote with their pages changed, and random
// bytes, as Parquet files: an error that names the file, or rows, and
// never a panic.
//
// An input is a file's number and its pages (below 0x80), or a whole
// file (from 0x80). The files each hold 2 rows of a few columns
// (typeGroups), in 2 row groups; their footers are written once, so the
// fuzzer spends its work on the pages: it minimizes every input that
// finds new code by removing each run of its bytes, the square of the
// input's length, and whole files of every type (12.8 KB, 10 of them
// the footer of 25 columns) held it for its minute on each, 43 inputs a
// minute. The pages are cut or padded with zeros to their length in the
// file, so that the footer's offsets still find them.
func FuzzRead(f *testing.F) {
	rng := rand.New(rand.NewPCG(9, 9))
	var files []fuzzFile
	for i, cols := range typeGroups {
		schema := testenv.Schema(f, cols...)
		// Each codec on some group: the pages' decompression is read too.
		o := Options{RowGroupSize: 1, Compression: []string{"snappy", "zstd", "gzip", "none"}[i%4]}
		enc, err := NewEncoder(o, schema)
		if err != nil {
			f.Fatal(err)
		}
		good := formattest.WriteFile(f, enc, randomRows(rng, schema, 2), 0)
		footer := int(binary.LittleEndian.Uint32(good[len(good)-8:]))
		end := len(good) - 8 - footer
		dec, err := NewDecoder(Options{}, schema)
		if err != nil {
			f.Fatal(err)
		}
		readAll(dec, good, func(err error) { f.Fatalf("seed %d: %v", i, err) })
		files = append(files, fuzzFile{dec: dec, tail: good[end:], pages: end - 4})
		f.Add(byte(i), good[4:end])
		if i == 2 {
			// One whole file, for the footer's reading.
			f.Add(byte(0x80+i), good)
		}
	}
	f.Add(byte(0x80), []byte("PAR1PAR1"))
	f.Add(byte(0x80), []byte("id,name\n1,a\n"))
	whole, err := NewDecoder(Options{}, allTypes(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, which byte, input []byte) {
		dec, data := whole, input
		if which < 0x80 {
			ff := files[int(which)%len(files)]
			dec = ff.dec
			data = make([]byte, 0, 4+ff.pages+len(ff.tail))
			data = append(data, "PAR1"...)
			data = append(data, input[:min(len(input), ff.pages)]...)
			data = append(data, make([]byte, ff.pages-min(len(input), ff.pages))...)
			data = append(data, ff.tail...)
		} else {
			// A whole file of one group, or of the group's columns
			// among every type's.
			if k := int(which-0x80) % (len(files) + 1); k < len(files) {
				dec = files[k].dec
			}
		}
		readAll(dec, data, func(err error) {
			if !strings.HasPrefix(err.Error(), "fuzz.parquet: ") {
				t.Fatalf("an error without the file's name: %v", err)
			}
		})
	})
}

// readAll reads every row group of data, as the file fuzz.parquet, and
// gives each error, of the opening or of a group, to fail.
func readAll(dec *Decoder, data []byte, fail func(error)) {
	fr, err := dec.OpenFile(bytes.NewReader(data), int64(len(data)), "fuzz.parquet")
	if err != nil {
		fail(err)
		return
	}
	for g := range fr.Groups() {
		if err := fr.ReadGroup(context.Background(), g, 0, 5, func(*row.Batch) error { return nil }); err != nil {
			fail(err)
		}
	}
}
