package elasticsearch

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"plain", `q"uo\te`, "new\nline\x01", "é ünïcode ☃", "bad \xff utf8", ""} {
		got := appendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q gave invalid JSON %s: %v", s, got, err)
		}
		if want := strings.ToValidUTF8(s, "\uFFFD"); back != want {
			t.Errorf("%q round-trips as %q", s, back)
		}
	}
}

func TestCurrentVersion(t *testing.T) {
	for reason, want := range map[string]uint64{
		"[a]: version conflict, current version [10] is higher or equal to the one provided [5]": 10,
		"[a]: version conflict, current version [9223372036854775807] is higher":                 1<<63 - 1,
		"[a]: version conflict, document already exists (current version [1])":                   1,
		"version conflict":    0,
		"current version [x]": 0,
		"current version [12": 0,
	} {
		got, ok := currentVersion(&itemError{Reason: reason})
		if got != want || ok != (want != 0) {
			t.Errorf("%q: %d, %v; want %d", reason, got, ok, want)
		}
	}
}
