package datagen

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

// build makes a datagen source from a source's YAML, as the pipeline does:
// through a registry, with the schema read from the same mapping.
func build(tb testing.TB, src string) (*Source, error) {
	tb.Helper()
	return buildWith(tb, src, nil)
}

func buildWith(tb testing.TB, src string, log *slog.Logger) (*Source, error) {
	tb.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		tb.Fatalf("test YAML: %v", err)
	}
	n := doc.Content[0]
	schema := testenv.Schema(tb, schemaList(n)...)
	r := connector.NewRegistry()
	Register(r)
	s, err := r.NewSource("p.yaml", &spec.Source{Type: "datagen", Options: n, Path: "sources[0]"},
		connector.SourceEnv{Name: "gen", Schema: schema, Logger: log})
	if err != nil {
		return nil, err
	}
	return s.(*Source), nil
}

// schemaList reads the columns of `schema: [name TYPE, ...]` from a
// source mapping.
func schemaList(n *yaml.Node) []string {
	var cols []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "schema" {
			for _, c := range n.Content[i+1].Content {
				cols = append(cols, c.Value)
			}
		}
	}
	return cols
}

func mustBuild(tb testing.TB, src string) *Source {
	tb.Helper()
	s, err := build(tb, src)
	if err != nil {
		tb.Fatalf("build: %v", err)
	}
	if err := s.Open(context.Background()); err != nil {
		tb.Fatalf("open: %v", err)
	}
	return s
}

// readRows reads up to n rows (all of a bounded source when n < 0) in
// reads of at most max, and reports whether the source ended.
func readRows(tb testing.TB, s *Source, n, max int) ([]row.Row, bool) {
	tb.Helper()
	var out []row.Row
	for n < 0 || len(out) < n {
		m := max
		if n >= 0 {
			m = min(max, n-len(out))
		}
		b, err := s.Read(context.Background(), m)
		if b != nil {
			if b.Len() > m {
				tb.Fatalf("Read(%d) returned %d rows", m, b.Len())
			}
			for _, c := range b.Changes {
				if c.Kind != row.Insert {
					tb.Fatalf("kind %v, want +I", c.Kind)
				}
				out = append(out, c.Row)
			}
		}
		if errors.Is(err, io.EOF) {
			return out, true
		}
		if err != nil {
			tb.Fatalf("read: %v", err)
		}
		if b == nil || b.Len() == 0 {
			tb.Fatalf("Read returned no rows and no error")
		}
	}
	return out, false
}

func printed(rows []row.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = row.Change{Kind: row.Insert, Row: r}.String()
	}
	return out
}
