package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand"
	randv2 "math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// The matrix's data (matrix.go), beside events.csv and customers.csv, in
// the same directory and from the same seed, so that every engine reads
// the same bytes:
//
//   - keys-1k.csv, keys-100k.csv, keys-10m.csv: id,ik,sk,ta,tb,z,amount
//     with a key k uniform in [0, keys): ik = k (BIGINT), sk =
//     "sensor_<k>" (STRING, 8 to 14 characters), ta = "g<k/10>" and
//     tb = k%10 (a two-column key with as many values as k), z a
//     Zipf-skewed key (s = 1.1) over the same range; amount uniform in
//     [0, 10000);
//   - keys-100k.json: keys-100k.csv's rows as JSON objects, one a line;
//   - wide.csv: 30 columns, c0 the row's id, c1..c19 BIGINT (c1 uniform
//     in [0, 10000)), c20..c29 STRING.
const (
	wideInts    = 20 // c0..c19
	wideColumns = 30
)

// keyScales are the key files' distinct-key ranges by name.
var keyScales = []struct {
	name string
	keys int64
}{{"1k", 1_000}, {"100k", 100_000}, {"10m", 10_000_000}}

// generateMatrix writes the matrix's files for rows into dir unless
// they are there already (meta-matrix.json says so).
func generateMatrix(dir string, rows int64, seed uint64) error {
	metaPath := filepath.Join(dir, "meta-matrix.json")
	type meta struct {
		Rows int64  `json:"rows"`
		Seed uint64 `json:"seed"`
	}
	var m meta
	if b, err := os.ReadFile(metaPath); err == nil && json.Unmarshal(b, &m) == nil && m.Rows == rows && m.Seed == seed {
		return nil
	}
	for i, sc := range keyScales {
		if err := writeKeys(dir, sc.name, sc.keys, rows, seed+uint64(i)+1, sc.name == "100k"); err != nil {
			return err
		}
	}
	if err := writeWide(filepath.Join(dir, "wide.csv"), rows, seed+100); err != nil {
		return err
	}
	b, _ := json.Marshal(meta{Rows: rows, Seed: seed})
	return os.WriteFile(metaPath, b, 0o644)
}

// writeKeys writes keys-NAME.csv and, with alsoJSON, keys-NAME.json.
func writeKeys(dir, name string, keys, rows int64, seed uint64, alsoJSON bool) error {
	r := randv2.New(randv2.NewPCG(seed, 0x6b657973))
	// math/rand's Zipf, the standard library's only one, from a source
	// seeded the same way every time.
	zipf := rand.NewZipf(rand.New(rand.NewSource(int64(seed))), 1.1, 1, uint64(keys-1))
	var jw *bufio.Writer
	var jf *os.File
	if alsoJSON {
		var err error
		if jf, err = os.Create(filepath.Join(dir, "keys-"+name+".json.tmp")); err != nil {
			return err
		}
		defer jf.Close()
		jw = bufio.NewWriterSize(jf, 1<<20)
	}
	var jb []byte
	err := writeFile(filepath.Join(dir, "keys-"+name+".csv"), func(w *bufio.Writer) {
		var b []byte
		for i := range rows {
			k := r.Int64N(keys)
			z := int64(zipf.Uint64())
			amount := r.Int64N(10000)
			b = strconv.AppendInt(b[:0], i, 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, k, 10)
			b = append(b, ",sensor_"...)
			b = strconv.AppendInt(b, k, 10)
			b = append(b, ",g"...)
			b = strconv.AppendInt(b, k/10, 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, k%10, 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, z, 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, amount, 10)
			b = append(b, '\n')
			w.Write(b)
			if jw != nil {
				jb = fmt.Appendf(jb[:0], `{"id":%d,"ik":%d,"sk":"sensor_%d","ta":"g%d","tb":%d,"z":%d,"amount":%d}`+"\n", i, k, k, k/10, k%10, z, amount)
				jw.Write(jb)
			}
		}
	})
	if err != nil || jw == nil {
		return err
	}
	if err := jw.Flush(); err != nil {
		return err
	}
	if err := jf.Close(); err != nil {
		return err
	}
	return os.Rename(jf.Name(), filepath.Join(dir, "keys-"+name+".json"))
}

// writeWide writes wide.csv.
func writeWide(path string, rows int64, seed uint64) error {
	r := randv2.New(randv2.NewPCG(seed, 0x77696465))
	return writeFile(path, func(w *bufio.Writer) {
		var b []byte
		for i := range rows {
			b = strconv.AppendInt(b[:0], i, 10)
			for c := 1; c < wideColumns; c++ {
				b = append(b, ',')
				switch {
				case c == 1:
					b = strconv.AppendInt(b, r.Int64N(10000), 10)
				case c < wideInts:
					b = strconv.AppendInt(b, r.Int64N(1<<uint(4*c%40+4)), 10)
				default:
					b = append(b, "w"...)
					b = strconv.AppendInt(b, int64(c), 10)
					b = append(b, '_')
					b = strconv.AppendInt(b, r.Int64N(100_000), 36)
				}
			}
			b = append(b, '\n')
			w.Write(b)
		}
	})
}

// wideSchema is wide.csv's columns.
func wideSchema() []string {
	s := make([]string, wideColumns)
	for c := range s {
		t := "STRING"
		if c < wideInts {
			t = "BIGINT"
		}
		s[c] = fmt.Sprintf("c%d %s", c, t)
	}
	return s
}

// keysSchema is a key file's columns.
var keysSchema = []string{"id BIGINT", "ik BIGINT", "sk STRING", "ta STRING", "tb BIGINT", "z BIGINT", "amount BIGINT"}
