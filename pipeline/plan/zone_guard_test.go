package plan_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/plan"
	"github.com/etld/etld/pipeline/spec"
)

// TestZoneDependentExpressions: under a local_time_zone other than UTC a
// conversion Flink makes in the session zone is either computed in it or
// refused at validation, positioned at the expression and naming it; the
// same pipeline in UTC (or without the key) plans.
func TestZoneDependentExpressions(t *testing.T) {
	const head = "version: 1\nname: p\n%ZONE%sources:\n  - name: s\n    type: datagen\n    schema: [k BIGINT, ts TIMESTAMP(3), lt TIMESTAMP_LTZ(3), txt STRING]\n" +
		"transforms:\n  - name: t\n    sql: %SQL%\nsinks:\n  - name: o\n    from: t\n    type: blackhole\n"
	cases := []struct {
		name, sql string
		refused   string // the error's text under Asia/Shanghai, "" when it plans (computed in the zone)
	}{
		{"cast ltz to string", "SELECT CAST(lt AS STRING) AS x FROM s", ""},
		{"cast ltz to timestamp", "SELECT CAST(lt AS TIMESTAMP(3)) AS x FROM s", ""},
		{"cast ltz to date", "SELECT CAST(lt AS DATE) AS x FROM s", ""},
		{"cast ltz to time", "SELECT CAST(lt AS TIME) AS x FROM s", ""},
		{"cast timestamp to ltz", "SELECT CAST(ts AS TIMESTAMP_LTZ(3)) AS x FROM s", ""},
		{"cast string to ltz", "SELECT CAST(txt AS TIMESTAMP_LTZ(3)) AS x FROM s", ""},
		{"hour", "SELECT HOUR(lt) AS x FROM s", ""},
		{"extract", "SELECT EXTRACT(DAY FROM lt) AS x FROM s", ""},
		{"date_format", "SELECT DATE_FORMAT(lt, 'yyyy-MM-dd HH') AS x FROM s", ""},
		{"floor", "SELECT FLOOR(lt TO DAY) AS x FROM s", ""},
		{"ceil", "SELECT CEIL(lt TO HOUR) AS x FROM s", ""},
		{"compare with timestamp", "SELECT k FROM s WHERE lt > ts", "comparing TIMESTAMP_LTZ(3) with TIMESTAMP(3)"},
		{"timestamp compared with ltz", "SELECT k FROM s WHERE ts BETWEEN lt AND lt", "comparing TIMESTAMP(3) with TIMESTAMP_LTZ(3)"},
		{"compare with date", "SELECT k FROM s WHERE lt = DATE '2020-01-01'", "comparing TIMESTAMP_LTZ(3) with DATE"},
		{"epoch", "SELECT EXTRACT(EPOCH FROM lt) AS x FROM s", ""},
		{"compare with text", "SELECT k FROM s WHERE lt > '2020-01-01 00:00:00'", ""},
		{"union widens timestamp to ltz", "SELECT ts AS x FROM s UNION ALL SELECT lt AS x FROM s", ""},
		{"localtimestamp", "SELECT k, LOCALTIMESTAMP AS x FROM s", ""},
		{"current_date", "SELECT k, CURRENT_DATE AS x FROM s", ""},
		{"current_time", "SELECT k, CURRENT_TIME AS x FROM s", ""},
		{"from_unixtime", "SELECT FROM_UNIXTIME(k) AS x FROM s", ""},
		{"unix_timestamp of text", "SELECT UNIX_TIMESTAMP(txt) AS x FROM s", ""},
		{"to_timestamp_ltz of text", "SELECT TO_TIMESTAMP_LTZ(txt, 'yyyy-MM-dd HH:mm:ss') AS x FROM s", ""},
		{"aggregate argument", "SELECT k, MAX(HOUR(lt)) AS x FROM s GROUP BY k", ""},
		{"values", "SELECT * FROM (VALUES (CAST(TIMESTAMP '2020-01-01 00:00:00' AS TIMESTAMP_LTZ(3)))) AS v(x)", ""},
		// Zone-free, or computed in the zone (expr's TestZoneExpressions).
		{"ltz itself", "SELECT lt AS x FROM s", ""},
		{"ltz compared with ltz", "SELECT k FROM s WHERE lt > TO_TIMESTAMP_LTZ(k, 3)", ""},
		{"current_timestamp", "SELECT k, CURRENT_TIMESTAMP AS x FROM s", ""},
		{"timestamp functions", "SELECT HOUR(ts) AS h, CAST(ts AS STRING) AS x FROM s", ""},
	}
	build := func(zone, sql string) error {
		src := strings.NewReplacer("%ZONE%", zone, "%SQL%", sql).Replace(head)
		sp, err := spec.Parse("p.yaml", []byte(src), func(string) (string, bool) { return "", false })
		if err != nil {
			return err
		}
		_, err = plan.Build(sp, plan.Env{Registry: allConnectors(), Logger: slog.New(slog.DiscardHandler)})
		return err
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, zone := range []string{"", "local_time_zone: UTC\n", "local_time_zone: '+00:00'\n"} {
				if err := build(zone, tc.sql); err != nil {
					t.Fatalf("%q in UTC: %v", zone, err)
				}
			}
			err := build("local_time_zone: Asia/Shanghai\n", tc.sql)
			if tc.refused == "" {
				if err != nil {
					t.Fatalf("in Asia/Shanghai: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("in Asia/Shanghai: planned; want %q refused", tc.refused)
			}
			msg := err.Error()
			for _, want := range []string{"p.yaml:10:", tc.refused, "under local_time_zone Asia/Shanghai", "ltz-compare-timestamp"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q, want it to contain %q", msg, want)
				}
			}
		})
	}
}
