package plan

import (
	"slices"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// TestNamedAggregates: an aggregate's $aN columns take the names of the
// calls its label lists, commas and brackets inside a call included.
func TestNamedAggregates(t *testing.T) {
	s := row.NewSchema(row.Field{Name: "cat"}, row.Field{Name: "$a0"}, row.Field{Name: "$a1"}, row.Field{Name: "$a2"})
	got := namedAggregates(s, "GroupAggregate(groupBy=[cat], select=[COUNT(*), LISTAGG(name, ', ]'), MAX(ARRAY[a, b][1])])").Names()
	want := []string{"cat", "COUNT(*)", "LISTAGG(name, ', ]')", "MAX(ARRAY[a, b][1])"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
