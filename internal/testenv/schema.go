package testenv

import (
	"fmt"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// Schema makes a schema of columns written as in a pipeline file's
// schema list, "name TYPE": Schema(t, "id BIGINT", "at TIMESTAMP(3)").
// A type that does not parse fails t.
func Schema(t testing.TB, cols ...string) row.Schema {
	t.Helper()
	s, err := ParseSchema(cols...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ParseSchema is Schema for columns a test does not control (a fuzzed
// pipeline file): a type that does not parse is an error.
func ParseSchema(cols ...string) (row.Schema, error) {
	var fields []row.Field
	for _, c := range cols {
		name, typ, _ := strings.Cut(strings.TrimSpace(c), " ")
		ty, err := row.ParseType(typ)
		if err != nil {
			return row.Schema{}, fmt.Errorf("column %q: %w", c, err)
		}
		fields = append(fields, row.Field{Name: name, Type: ty})
	}
	return row.NewSchema(fields...), nil
}
