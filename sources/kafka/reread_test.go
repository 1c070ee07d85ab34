package kafka

import (
	"maps"
	"strings"
	"testing"

	"github.com/etld/etld/internal/testenv"
)

// TestRereadRange: a range of two positions reads each partition from
// its offset in the first (a partition only the second names, from
// where the state began on it) up to its offset in the second; a start
// after the end, or a position that does not say where the state began,
// is refused with the reason.
func TestRereadRange(t *testing.T) {
	schema := testenv.Schema(t, "x INT")
	s, err := build(t, "brokers: [127.0.0.1:1]\ntopic: t\nformat: json\n", schema, nil)
	if err != nil {
		t.Fatal(err)
	}
	from := `{"v":1,"offsets":{"t/0":10},"from":{"t/0":2}}`
	to := `{"v":1,"offsets":{"t/0":25,"t/1":7},"from":{"t/0":2,"t/1":3}}`
	if err := s.RereadRange([]byte(from), []byte(to)); err != nil {
		t.Fatal(err)
	}
	p0, p1 := topicPartition{"t", 0}, topicPartition{"t", 1}
	if want := map[topicPartition]int64{p0: 10, p1: 3}; !maps.Equal(s.rereadFrom, want) {
		t.Errorf("starts %v, want %v", s.rereadFrom, want)
	}
	if want := map[topicPartition]int64{p0: 25, p1: 7}; !maps.Equal(s.reread, want) {
		t.Errorf("ends %v, want %v", s.reread, want)
	}
	for _, tc := range []struct{ from, to, want string }{
		{`{"v":1,"offsets":{"t/0":30}}`, `{"v":1,"offsets":{"t/0":25},"from":{"t/0":2}}`, "after its end"},
		{`{"v":1,"offsets":{"t/0":3}}`, `{"v":1,"offsets":{"t/0":25}}`, "does not say at which offset"},
		{`{"v":2}`, `{"v":1,"offsets":{"t/0":25},"from":{"t/0":2}}`, "version 2"},
	} {
		s, err := build(t, "brokers: [127.0.0.1:1]\ntopic: t\nformat: json\n", schema, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RereadRange([]byte(tc.from), []byte(tc.to)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("range %s..%s: %v, want %q", tc.from, tc.to, err, tc.want)
		}
	}
}
