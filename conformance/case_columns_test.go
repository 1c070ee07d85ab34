package conformance

import (
	"reflect"
	"testing"
)

// A comma inside a type's angle brackets (MAP<K, V>, ROW<a INT, b INT>)
// does not end the column; one in a comparison of a computed column
// does not open anything.
func TestColumnListTypeArguments(t *testing.T) {
	cols, tail, err := columnList("(x INT, m MAP<STRING, INT>, r ROW<a INT, b ARRAY<MAP<INT, INT>>>, big AS x > 1, d DECIMAL(10, 2)) json")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"x INT", "m MAP<STRING, INT>", "r ROW<a INT, b ARRAY<MAP<INT, INT>>>", "big AS x > 1", "d DECIMAL(10, 2)"}
	if !reflect.DeepEqual(cols, want) || tail != "json" {
		t.Errorf("columns %q, tail %q; want %q, json", cols, tail, want)
	}
}
