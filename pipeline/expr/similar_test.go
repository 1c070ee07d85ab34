package expr

import (
	"strings"
	"testing"
)

func TestSimilarTo(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"id SIMILAR TO 'sensor-1'", "BOOLEAN NOT NULL true"},
		{"id SIMILAR TO 'sensor'", "BOOLEAN NOT NULL false"},
		{"id SIMILAR TO 's%'", "BOOLEAN NOT NULL true"},
		{"id SIMILAR TO 'sensor-_'", "BOOLEAN NOT NULL true"},
		{"id SIMILAR TO '(sensor|probe)-[0-9]+'", "BOOLEAN NOT NULL true"},
		{"id NOT SIMILAR TO '(sensor|probe)-[0-9]+'", "BOOLEAN NOT NULL false"},
		{"id SIMILAR TO 'sen{0,1}sor-1*'", "BOOLEAN NOT NULL true"},
		{"'a$b' SIMILAR TO 'a$b'", "BOOLEAN NOT NULL true"},
		{"'a\\b' SIMILAR TO 'a\\b'", "BOOLEAN NOT NULL true"},
		{"'a_b' SIMILAR TO 'a!_b' ESCAPE '!'", "BOOLEAN NOT NULL true"},
		{"'axb' SIMILAR TO 'a!_b' ESCAPE '!'", "BOOLEAN NOT NULL false"},
		{"'a!b' SIMILAR TO 'a!!b' ESCAPE '!'", "BOOLEAN NOT NULL true"},
		{"'a+' SIMILAR TO 'a#+' ESCAPE '#'", "BOOLEAN NOT NULL true"},
		{"'a\nb' SIMILAR TO 'a%'", "BOOLEAN NOT NULL true"},
		{"'a.b' SIMILAR TO 'a.b'", "BOOLEAN NOT NULL true"},
		{"'axb' SIMILAR TO 'a.b'", "BOOLEAN NOT NULL true"},
		{"':' SIMILAR TO '[:a]'", "BOOLEAN NOT NULL true"},
		{"'-' SIMILAR TO '[a-]'", "BOOLEAN NOT NULL true"},
		{"'_' SIMILAR TO '[a!_]' ESCAPE '!'", "BOOLEAN NOT NULL true"},
		{"x_s SIMILAR TO 'a%'", "BOOLEAN null"},
		{"id SIMILAR TO id", "BOOLEAN NOT NULL true"},
		{"id SIMILAR TO CAST(NULL AS STRING)", "BOOLEAN null"},
	})
}

func TestSimilarRegexpErrors(t *testing.T) {
	cases := []struct {
		pat  string
		esc  rune
		want string
	}{
		{"a!", '!', "invalid escape sequence"},
		{"a!b", '!', "invalid escape sequence"},
		{"a]", 0, "] without ["},
		{"[ab", 0, "[ without ]"},
		{"[[:alpha:]]", 0, "not supported yet"},
		{"[a_]", 0, "_ inside [ ]"},
		{"(a", 0, "invalid regular expression"},
	}
	for _, tc := range cases {
		_, err := similarRegexp(tc.pat, tc.esc)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("similarRegexp(%q, %q) = %v, want an error with %q", tc.pat, tc.esc, err, tc.want)
		}
	}
}
