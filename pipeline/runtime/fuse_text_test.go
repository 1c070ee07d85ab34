package runtime

import (
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// TestNoText: the read buffers may be reused behind any reader only when
// none of the decoded columns holds text (or may: a composite's
// elements); the columns not decoded do not count.
func TestNoText(t *testing.T) {
	var schema row.Schema
	for _, ty := range []string{"BIGINT", "STRING", "TIMESTAMP(3)", "DECIMAL(20,2)", "BYTES", "ARRAY<INT>", "DATE", "DOUBLE", "ROW<a INT>", "MAP<INT, INT>", "BOOLEAN", "TIMESTAMP_LTZ(3)", "TIME"} {
		typ, err := row.ParseType(ty)
		if err != nil {
			t.Fatal(err)
		}
		schema.Fields = append(schema.Fields, row.Field{Name: ty, Type: typ})
	}
	for _, c := range []struct {
		cols []int
		want bool
	}{
		{[]int{0, 2}, true},
		{[]int{2, 0, 3, 6, 7, 10, 11, 12}, true},
		{[]int{0, 1}, false},
		{[]int{4}, false},
		{[]int{5}, false},
		{[]int{8}, false},
		{[]int{9}, false},
		{[]int{13}, false}, // no such column
		{nil, false},       // every column
	} {
		if got := noText(schema, c.cols); got != c.want {
			t.Errorf("noText(%v) = %v, want %v", c.cols, got, c.want)
		}
	}
	numbers := row.Schema{Fields: schema.Fields[:1]}
	if !noText(numbers, nil) {
		t.Error("noText of a BIGINT table's every column = false")
	}
}
