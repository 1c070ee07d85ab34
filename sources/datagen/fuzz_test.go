package datagen

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/spec"
)

// FuzzConfig builds sources from arbitrary option YAML: no panic, every
// error names a line and an option path, and a source that builds reads.
//
// Inputs are of 320 bytes at most, about the seeds' size: the fuzzer minimizes
// each input that finds new code by removing every run of its bytes (the
// square of its length, an input built each time), and a mutation of a
// 500-byte seed held it for its minute, 8 inputs in 77 s.
func FuzzConfig(f *testing.F) {
	f.Add("type: datagen\nschema: [id BIGINT, n INT, ok BOOLEAN, name STRING, \"p DECIMAL(8, 2)\"]\nfields: {id: {kind: sequence, start: 1, end: 9}, n: {min: -5, max: 5, null_rate: 0.2}, name: {length: 8}, p: {max: 999.99}}\n")
	f.Add("type: datagen\nschema: [t DOUBLE, r BYTES, d DATE, ts TIMESTAMP(3)]\nfields: {t: {min: -10, max: 45}, r: {length: 3}, d: {kind: sequence, start: 2024-01-01, end: 2024-12-31}, ts: {kind: sequence, start: \"2024-01-01 00:00:00\", end: \"2024-01-02 00:00:00\", step: 250ms}}\n")
	f.Add("type: datagen\nrows: 3\nschema: [a INT]\nfields: {a: {kind: sequence, start: 1, end: 9}}\n")
	f.Add("type: datagen\nschema: [s VARCHAR(3), b BYTES(2)]\nfields: {s: {length: 3, null_rate: 0.5}, b: {}}\n")
	f.Add("type: datagen\nschema: [t TIMESTAMP_LTZ(9), d DATE]\nfields: {t: {max_past: 1h}, d: {kind: sequence, start: 2024-01-01, step: 2d}}\n")
	f.Add("type: datagen\nschema: [\"p DECIMAL(18, 18)\", x FLOAT]\nfields: {p: {min: -0.5}, x: {kind: sequence, start: 1e30, end: 1e30}}\n")
	f.Add("type: datagen\nschema: [a INT]\nfields: {a: {kind: sequence, start: 1, end: 2, min: 0, step: 1s}, b: 3}\n")
	f.Add("type: datagen\nrate: 1e-300\nseed: 0x10\nschema: [a BIGINT]\n")
	r := connector.NewRegistry()
	Register(r)
	f.Fuzz(func(t *testing.T, src string) {
		var doc yaml.Node
		if len(src) > 320 || yaml.Unmarshal([]byte(src), &doc) != nil || len(doc.Content) == 0 {
			return
		}
		n := doc.Content[0]
		schema, err := testenv.ParseSchema(schemaList(n)...)
		if err != nil {
			return
		}
		s, err := r.NewSource("p.yaml", &spec.Source{Type: "datagen", Options: n, Path: "sources[0]"},
			connector.SourceEnv{Name: "gen", Schema: schema})
		if err != nil {
			var list spec.List
			if !errors.As(err, &list) {
				t.Fatalf("error %T without a position: %v", err, err)
			}
			for _, e := range list {
				if !e.Pos.IsValid() || e.Path == "" {
					t.Fatalf("error without a line or a path: %v", e)
				}
			}
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		defer cancel()
		b, err := s.Read(ctx, 16)
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("read: %v", err)
		}
		if b != nil && b.Len() > 16 {
			t.Fatalf("Read(16) returned %d rows", b.Len())
		}
	})
}

// FuzzRestore restores arbitrary bytes: no panic; a position it accepts
// gives a source that reads.
func FuzzRestore(f *testing.F) {
	const src = "type: datagen\nseed: 1\nrows: 100\nschema: [a INT, s STRING]\nfields: {a: {kind: sequence, start: 1, end: 50}, s: {length: 4}}\n"
	for _, k := range []int{0, 1, 49} {
		s := mustBuild(f, src)
		readRows(f, s, k, 10)
		pos, err := s.Position()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(pos)
	}
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, pos []byte) {
		s, err := build(t, src)
		if err != nil {
			t.Fatal(err)
		}
		if s.Restore(pos) != nil {
			return
		}
		if _, err := s.Read(context.Background(), 8); err != nil && !errors.Is(err, io.EOF) {
			t.Fatalf("read after restore: %v", err)
		}
	})
}
