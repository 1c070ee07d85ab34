package file

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// TestLookupLoadsTheFile: a bounded file answers a lookup join from
// memory: every row of a key (several for a repeated key), none for a
// key it lacks, a row with a NULL key matching nothing; a bad record
// goes to on_error as a scan's does.
func TestLookupLoadsTheFile(t *testing.T) {
	h := newHarness(t)
	path := h.write("side.csv", "1,one\n2,two\n1,uno\n,nobody\nx,bad\n3,three\n")
	h.skip = true
	src := h.mustBuild("path: "+path+"\nformat: {type: csv, null_literal: \"\"}", "[k BIGINT, v STRING]")
	lk, err := src.Lookuper([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := lk.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer lk.Close(ctx)
	found, err := lk.Lookup(ctx, [][]row.Value{{row.BigIntValue(1)}, {row.BigIntValue(4)}, {row.BigIntValue(3)}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rows := range found {
		got = append(got, fmt.Sprint(rows))
	}
	if want := "[[1 one] [1 uno]]|[]|[[3 three]]"; strings.Join(got, "|") != want {
		t.Fatalf("lookup of 1, 4, 3: %s, want %s", strings.Join(got, "|"), want)
	}
	if len(h.rejects) != 1 {
		t.Fatalf("%d bad records (%v), want the one of line 5", len(h.rejects), h.rejects)
	}
	if n := lk.RoundTrips(); n != 1 {
		t.Fatalf("%d round trips, want 1", n)
	}
}

// TestLookupRefusesWhatCannotLoadOnce: a followed file never ends and a
// changelog format is no table of rows: neither can be loaded whole.
func TestLookupRefusesWhatCannotLoadOnce(t *testing.T) {
	h := newHarness(t)
	path := h.write("side.csv", "1,one\n")
	for opts, want := range map[string]string{
		"path: " + path + "\nfollow: true":                  "follow",
		"path: " + path + "\nformat: {type: debezium-json}": "changelog format",
	} {
		src := h.mustBuild(opts, "[k BIGINT, v STRING]")
		if _, err := src.Lookuper([]int{0}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %q", opts, err, want)
		}
	}
}
