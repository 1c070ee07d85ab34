package conformance

import (
	"slices"
	"testing"
)

// TestMergeKeepsOneExpect: regenerating keeps the previous file's expect
// line and notes once, whether or not the generator writes the expect
// line itself, however often it runs.
func TestMergeKeepsOneExpect(t *testing.T) {
	prev := &Case{Header: []string{"mode: streaming", "expect: some-difference", "# why it differs"}, Expect: "some-difference"}
	for _, tc := range []struct {
		name   string
		header []string
		expect string
	}{
		{"generator writes no expect line", []string{"mode: streaming"}, ""},
		{"generator writes the expect line", []string{"mode: streaming", "expect: some-difference"}, "some-difference"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := prev
			for range 3 {
				fresh := &Case{Header: slices.Clone(tc.header), Expect: tc.expect}
				c = merge(fresh, c)
			}
			want := []string{"mode: streaming", "expect: some-difference", "# why it differs"}
			if !slices.Equal(c.Header, want) || c.Expect != "some-difference" {
				t.Fatalf("after three merges: header %q, expect %q; want %q, some-difference", c.Header, c.Expect, want)
			}
		})
	}
}
