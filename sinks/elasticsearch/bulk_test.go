package elasticsearch

import (
	"encoding/json"
	"testing"
)

// Text is escaped as JSON; invalid UTF-8 becomes one U+FFFD per
// malformed sequence as Java cuts them, as in Flink's documents.
func TestAppendJSONString(t *testing.T) {
	for s, want := range map[string]string{"plain": "plain", `q"uo\te`: `q"uo\te`, "new\nline\x01": "new\nline\x01",
		"é ünïcode ☃": "é ünïcode ☃", "bad \xff utf8": "bad \uFFFD utf8", "": "",
		"a\xe2\x82b": "a\uFFFDb", "\xc0\xaf\"": "\uFFFD\uFFFD\"", "\xed\xa0\x80": "\uFFFD"} {
		got := appendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q gave invalid JSON %s: %v", s, got, err)
		}
		if back != want {
			t.Errorf("%q round-trips as %q, want %q", s, back, want)
		}
	}
}
