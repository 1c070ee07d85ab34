package mysql

import (
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// MySQL's and MariaDB's DATE and DATETIME hold the years 1000 to 9999
// (TIMESTAMP 1970 to 2038), and a zero date where sql_mode lets one in:
// their text (the scan's, the binlog's, both through parseValue) reads
// at both ends and just inside, and the zero dates are errors saying so;
// no value past the years 0000 to 9999 can come from them.
func TestTimeRanges(t *testing.T) {
	date := row.Type{ID: row.Date}
	ts := row.Type{ID: row.Timestamp, Precision: 6}
	ltz := row.Type{ID: row.TimestampLTZ, Precision: 3}
	for _, tt := range []struct {
		text string
		t    row.Type
		want string // the value's text, or the error's end
	}{
		{"1000-01-01", date, "1000-01-01"},
		{"1000-01-02", date, "1000-01-02"},
		{"9999-12-31", date, "9999-12-31"},
		{"9999-12-30", date, "9999-12-30"},
		{"0000-00-00", date, `cannot parse "0000-00-00" as DATE`},
		{"2024-00-00", date, `cannot parse "2024-00-00" as DATE`},
		{"1000-01-01 00:00:00.000000", ts, "1000-01-01 00:00:00.000000"},
		{"9999-12-31 23:59:59.999999", ts, "9999-12-31 23:59:59.999999"},
		{"9999-12-31 23:59:59.999998", ts, "9999-12-31 23:59:59.999998"},
		{"0000-00-00 00:00:00", ts, `the zero date "0000-00-00 00:00:00" is no timestamp`},
		{"1970-01-01 00:00:01.000", ltz, "1970-01-01 00:00:01.000"},
		{"2038-01-19 03:14:07.999", ltz, "2038-01-19 03:14:07.999"},
	} {
		v, err := parseValue([]byte(tt.text), tt.t)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = v.Text(tt.t)
		}
		if got != tt.want && !(err != nil && strings.HasSuffix(got, tt.want)) {
			t.Errorf("parseValue(%q, %s) = %s, want %s", tt.text, tt.t, got, tt.want)
		}
	}
}
