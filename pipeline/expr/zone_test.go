package expr

import (
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/sql"
)

// TestZoneExpressions: under a session zone a TIMESTAMP_LTZ converts to
// and from a wall clock in that zone, as Flink 2.3's cast rules and
// DateTimeUtils do (java.time's rules at a DST shift); what is not
// zone-aware yet is refused, never computed in UTC.
func TestZoneExpressions(t *testing.T) {
	sh, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Skip(err)
	}
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Skip(err)
	}
	// 2020-10-09 16:00:01Z is 2020-10-10 00:00:01 in Shanghai.
	const inst = "TO_TIMESTAMP_LTZ(1602259201000, 3)"
	cases := []struct {
		zone       *time.Location
		expr, want string
	}{
		{sh, "CAST(" + inst + " AS STRING)", "STRING NOT NULL 2020-10-10 00:00:01.000"},
		{sh, "CAST(" + inst + " AS TIMESTAMP(3))", "TIMESTAMP(3) NOT NULL 2020-10-10T00:00:01"},
		{sh, "CAST(" + inst + " AS DATE)", "DATE NOT NULL 2020-10-10"},
		{sh, "CAST(" + inst + " AS TIME)", "TIME(0) NOT NULL 00:00:01"},
		{sh, "HOUR(" + inst + ")", "BIGINT NOT NULL 0"},
		{sh, "EXTRACT(DAY FROM " + inst + ")", "BIGINT NOT NULL 10"},
		{sh, "DATE_FORMAT(" + inst + ", 'yyyy-MM-dd HH:mm')", "STRING NOT NULL 2020-10-10 00:00"},
		{sh, "CAST(TIMESTAMP '2020-10-10 00:00:01' AS TIMESTAMP_LTZ(3))", "TIMESTAMP_LTZ(3) NOT NULL 2020-10-09T16:00:01Z"},
		{sh, "CAST('2020-10-10 00:00:01' AS TIMESTAMP_LTZ(3))", "TIMESTAMP_LTZ(3) NOT NULL 2020-10-09T16:00:01Z"},
		{sh, "CAST(DATE '2020-10-10' AS TIMESTAMP_LTZ(3))", "TIMESTAMP_LTZ(3) NOT NULL 2020-10-09T16:00:00Z"},
		{sh, "FROM_UNIXTIME(1602259201)", "STRING NOT NULL 2020-10-10 00:00:01"},
		// The test clock, 2024-05-06 07:08:09.123Z, in Shanghai.
		{sh, "LOCALTIMESTAMP", "TIMESTAMP(3) NOT NULL 2024-05-06T15:08:09.123"},
		{sh, "CURRENT_DATE", "DATE NOT NULL 2024-05-06"},
		{sh, "CURRENT_TIME", "TIME(0) NOT NULL 15:08:09.123"},
		{sh, "CURRENT_TIMESTAMP", "TIMESTAMP_LTZ(3) NOT NULL 2024-05-06T07:08:09.123Z"},
		// Los Angeles springs forward at 2024-03-10 02:00 (PST -8 to PDT
		// -7): 02:30 does not exist and moves forward by the gap.
		{la, "CAST(TIMESTAMP '2024-03-10 02:30:00' AS TIMESTAMP_LTZ(3))", "TIMESTAMP_LTZ(3) NOT NULL 2024-03-10T10:30:00Z"},
		{la, "CAST(TIMESTAMP '2024-03-10 01:59:59' AS TIMESTAMP_LTZ(3))", "TIMESTAMP_LTZ(3) NOT NULL 2024-03-10T09:59:59Z"},
		{la, "CAST(TIMESTAMP '2024-03-10 03:00:00' AS TIMESTAMP_LTZ(3))", "TIMESTAMP_LTZ(3) NOT NULL 2024-03-10T10:00:00Z"},
		// It falls back at 2024-11-03 02:00: 01:30 happens twice and takes
		// the earlier offset (PDT), the earlier instant.
		{la, "CAST(TIMESTAMP '2024-11-03 01:30:00' AS TIMESTAMP_LTZ(3))", "TIMESTAMP_LTZ(3) NOT NULL 2024-11-03T08:30:00Z"},
		{la, "CAST(TO_TIMESTAMP_LTZ(1730622600000, 3) AS STRING)", "STRING NOT NULL 2024-11-03 01:30:00.000"},
		{la, "CAST(TO_TIMESTAMP_LTZ(1730626200000, 3) AS STRING)", "STRING NOT NULL 2024-11-03 01:30:00.000"},
		{la, "HOUR(TO_TIMESTAMP_LTZ(1710066600000, 3))", "BIGINT NOT NULL 3"},
		// Still refused under a zone.
		// FLOOR/CEIL round the wall clock, shifted back by the instant's
		// own offset (Flink's timestampFloor): Los Angeles's 01:30 PST on
		// 2024-11-03 floors TO DAY to 00:00 taken at -8, 08:00Z.
		{sh, "FLOOR(" + inst + " TO DAY)", "TIMESTAMP_LTZ(3) NOT NULL 2020-10-09T16:00:00Z"},
		{sh, "CEIL(" + inst + " TO MONTH)", "TIMESTAMP_LTZ(3) NOT NULL 2020-10-31T16:00:00Z"},
		{la, "FLOOR(TO_TIMESTAMP_LTZ(1730626200000, 3) TO DAY)", "TIMESTAMP_LTZ(3) NOT NULL 2024-11-03T08:00:00Z"},
		{la, "FLOOR(TO_TIMESTAMP_LTZ(1730622600000, 3) TO DAY)", "TIMESTAMP_LTZ(3) NOT NULL 2024-11-03T07:00:00Z"},
		{sh, "FLOOR(" + inst + " TO MINUTE)", "TIMESTAMP_LTZ(3) NOT NULL 2020-10-09T16:00:00Z"},
		{sh, "EXTRACT(EPOCH FROM " + inst + ")", "BIGINT NOT NULL 1602288001"},
		// A STRING constant against one is the text's instant in the zone.
		{la, "TO_TIMESTAMP_LTZ(1730622600000, 3) = '2024-11-03 01:30:00'", "BOOLEAN NOT NULL true"},
		{la, "TO_TIMESTAMP_LTZ(1710064800000, 3) >= '2024-03-10 02:30:00'", "BOOLEAN NOT NULL false"},
		{sh, inst + " > TIMESTAMP '2020-10-10 00:00:00'", "error: comparing TIMESTAMP_LTZ(3) with TIMESTAMP(0) under"},
		// TO_TIMESTAMP_LTZ reads its text in UTC under any zone.
		{sh, "TO_TIMESTAMP_LTZ('2020-10-10 00:00:01', 'yyyy-MM-dd HH:mm:ss')", "TIMESTAMP_LTZ(3) 2020-10-10T00:00:01Z"},
		// UNIX_TIMESTAMP reads a wall clock in the zone as
		// SimpleDateFormat does: a repeated one takes the later offset.
		{sh, "UNIX_TIMESTAMP('2020-10-10 00:00:01')", "BIGINT NOT NULL 1602259201"},
		{la, "UNIX_TIMESTAMP('2024-11-03 01:30:00')", "BIGINT NOT NULL 1730626200"},
		{la, "UNIX_TIMESTAMP('2024-03-10 02:30:00')", "BIGINT NOT NULL 1710066600"},
		{la, "UNIX_TIMESTAMP('2024-03-10 02:30:00+01:00', 'yyyy-MM-dd HH:mm:ssXXX')", "BIGINT NOT NULL 1710034200"},
		// UTC given as a zone is no zone.
		{time.UTC, "CAST(" + inst + " AS STRING)", "STRING NOT NULL 2020-10-09 16:00:01.000"},
		{time.UTC, "FLOOR(" + inst + " TO DAY)", "TIMESTAMP_LTZ(3) NOT NULL 2020-10-09T00:00:00Z"},
	}
	for _, tc := range cases {
		t.Run(tc.zone.String()+" "+tc.expr, func(t *testing.T) {
			e, err := sql.ParseExpr(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			c, err := Compile(e, testTable, WithClock(testClock), WithZone(tc.zone))
			if want, ok := strings.CutPrefix(tc.want, "error: "); ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("compile error %v, want %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			v, err := c.Eval(testRow)
			if err != nil {
				t.Fatal(err)
			}
			if got := show(c, v); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}
