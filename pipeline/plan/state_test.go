package plan

import (
	"slices"
	"strings"
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

// TestEveryKindHasAName: every plan node kind has a name of its own in
// operator and state IDs. A kind left out would be named by its number
// ("node16"), which moves when a kind is added before it: a newer etld
// would then not find the state an older one saved.
func TestEveryKindHasAName(t *testing.T) {
	seen := map[string]NodeKind{}
	for k := ScanNode; k <= SortNode; k++ {
		name := operatorName(k)
		if strings.HasPrefix(name, "node") {
			t.Errorf("kind %d has no name: %q", k, name)
		}
		if other, ok := seen[name]; ok {
			t.Errorf("kinds %d and %d share the name %q", other, k, name)
		}
		seen[name] = k
	}
	if name := operatorName(SortNode + 1); !strings.HasPrefix(name, "node") {
		t.Errorf("SortNode is no longer the last kind (%q after it): make the loop above reach the last", name)
	}
}
