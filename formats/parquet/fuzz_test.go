package parquet

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/etld/etld/formats/formattest"
	"github.com/etld/etld/pipeline/row"
)

// FuzzRead reads random bytes, and files etld wrote with bytes changed,
// as a Parquet file of every type: an error that names the file, or
// rows, and never a panic.
//
// The seed files hold 2 rows in 2 row groups (7 in 3 made 20 KB): the
// fuzzer minimizes each input that finds new code by trying to remove
// every run of its bytes, the square of its length, which held it for
// its minute on each, a dozen inputs a minute.
func FuzzRead(f *testing.F) {
	schema := allTypes(f)
	enc, err := NewEncoder(Options{RowGroupSize: 1}, schema)
	if err != nil {
		f.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	good := formattest.WriteFile(f, enc, randomRows(rng, schema, 2), 0)
	f.Add(good, uint16(0), byte(0))
	f.Add(good, uint16(len(good)/2), byte(0xff))
	f.Add(good, uint16(len(good)-9), byte(1))
	f.Add([]byte("PAR1PAR1"), uint16(0), byte(0))
	f.Add([]byte("id,name\n1,a\n"), uint16(0), byte(0))
	dec, err := NewDecoder(Options{}, schema)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, at uint16, b byte) {
		data = bytes.Clone(data)
		if len(data) > 0 {
			data[int(at)%len(data)] ^= b
		}
		fr, err := dec.OpenFile(bytes.NewReader(data), int64(len(data)), "fuzz.parquet")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.parquet: ") {
				t.Fatalf("an error without the file's name: %v", err)
			}
			return
		}
		for g := range fr.Groups() {
			err := fr.ReadGroup(context.Background(), g, 0, 5, func(*row.Batch) error { return nil })
			if err != nil && !strings.HasPrefix(err.Error(), "fuzz.parquet: ") {
				t.Fatalf("an error without the file's name: %v", err)
			}
		}
	})
}
