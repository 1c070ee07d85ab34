package datagen

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

func TestRandomBounds(t *testing.T) {
	const n = 10000
	day := int64(24 * time.Hour / time.Microsecond)
	cases := []struct {
		name  string
		src   string
		check func(v row.Value) bool // every non-NULL value
		// nullRate is the configured rate; the count must be near it.
		nullRate float64
		// distinct, when > 0, is the exact number of different values expected.
		distinct int
	}{
		{"int min max", "schema: [a INT]\nfields: {a: {min: -3, max: 6}}",
			func(v row.Value) bool { return v.Type() == row.Int && v.Int64() >= -3 && v.Int64() <= 6 }, 0, 10},
		{"int default covers the type", "schema: [a INT]",
			func(v row.Value) bool { return v.Int64() >= math.MinInt32 && v.Int64() <= math.MaxInt32 }, 0, 0},
		{"bigint constant", "schema: [a BIGINT]\nfields: {a: {min: 7, max: 7}}",
			func(v row.Value) bool { return v.Int64() == 7 }, 0, 1},
		{"bigint wide", "schema: [a BIGINT]\nfields: {a: {min: -9223372036854775808, max: 9223372036854775807}}",
			func(v row.Value) bool { return v.Type() == row.BigInt }, 0, 0},
		{"decimal", "schema: [\"a DECIMAL(5, 2)\"]\nfields: {a: {min: -1.5, max: 2.25}}",
			func(v row.Value) bool { return v.Scale() == 2 && v.Unscaled() >= -150 && v.Unscaled() <= 225 }, 0, 376},
		{"decimal default", "schema: [\"a DECIMAL(3, 1)\"]",
			func(v row.Value) bool { return v.Unscaled() >= -999 && v.Unscaled() <= 999 }, 0, 0},
		{"decimal(38) default stays within int64", "schema: [\"a DECIMAL(38, 2)\"]",
			func(v row.Value) bool { return v.Scale() == 2 && !v.WideDecimal() && v.Unscaled() > math.MinInt64 }, 0, 0},
		{"double", "schema: [a DOUBLE]\nfields: {a: {min: -10, max: 45, null_rate: 0.3}}",
			func(v row.Value) bool { return v.Type() == row.Double && v.Float64() >= -10 && v.Float64() < 45 }, 0.3, 0},
		{"double default", "schema: [a DOUBLE]",
			func(v row.Value) bool { return v.Float64() >= 0 && v.Float64() < 1 }, 0, 0},
		{"float narrow", "schema: [a FLOAT]\nfields: {a: {min: 1, max: 1.0000001}}",
			func(v row.Value) bool { return v.Float64() >= 1 && float32(v.Float64()) < float32(1.0000001) }, 0, 0},
		{"boolean", "schema: [a BOOLEAN]\nfields: {a: {null_rate: 0.05}}",
			func(v row.Value) bool { return v.Type() == row.Boolean }, 0.05, 2},
		{"string length", "schema: [a STRING]\nfields: {a: {length: 12, null_rate: 1}}",
			func(v row.Value) bool { return false }, 1, 0},
		{"string alphanumeric", "schema: [a STRING]\nfields: {a: {length: 12}}",
			func(v row.Value) bool { return len(v.Str()) == 12 && strings.Trim(v.Str(), alphabet) == "" }, 0, n},
		{"string default length", "schema: [a STRING]",
			func(v row.Value) bool { return len(v.Str()) == 100 }, 0, 0},
		{"varchar default length", "schema: [a VARCHAR(5)]",
			func(v row.Value) bool { return len(v.Str()) == 5 }, 0, 0},
		{"empty strings", "schema: [a STRING]\nfields: {a: {length: 0}}",
			func(v row.Value) bool { return v.Type() == row.String && v.Str() == "" }, 0, 1},
		{"bytes", "schema: [a BYTES]\nfields: {a: {length: 13}}",
			func(v row.Value) bool { return v.Type() == row.Bytes && len(v.Str()) == 13 }, 0, n},
		{"timestamp_ltz max_past", "schema: [a TIMESTAMP_LTZ(3)]\nfields: {a: {max_past: 1h}}",
			func(v row.Value) bool {
				now := time.Now().UnixMicro()
				return v.Micros()%1000 == 0 && v.Micros() <= now && v.Micros() >= now-int64(time.Hour/time.Microsecond)-60e6
			}, 0, 0},
		{"timestamp(0) now", "schema: [a TIMESTAMP(0)]",
			func(v row.Value) bool {
				now := row.TimeValue(row.Timestamp, time.Now()).Micros()
				return v.Micros()%1e6 == 0 && v.Micros() <= now && v.Micros() > now-60e6
			}, 0, 0},
		{"date max_past", "schema: [a DATE]\nfields: {a: {max_past: 10d}}",
			func(v row.Value) bool {
				today := row.TimeValue(row.Timestamp, time.Now()).Micros() / day
				return int64(v.Days()) <= today && int64(v.Days()) >= today-11
			}, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rows, _ := readRows(t, mustBuild(t, "type: datagen\nseed: 11\n"+tc.src+"\n"), n, 1024)
			nulls := 0
			seen := map[row.Value]bool{}
			for _, r := range rows {
				v := r[0]
				if v.IsNull() {
					nulls++
					continue
				}
				seen[v] = true
				if !tc.check(v) {
					t.Fatalf("value %v out of bounds", v)
				}
			}
			// Wide enough for chance (the binomial's sd is at most 50 here),
			// narrow enough that an ignored null_rate fails.
			if want := tc.nullRate * n; math.Abs(float64(nulls)-want) > 250 {
				t.Fatalf("%d NULLs in %d rows, want about %.0f", nulls, n, want)
			}
			if tc.distinct > 0 && len(seen) != tc.distinct {
				t.Fatalf("%d distinct values, want %d", len(seen), tc.distinct)
			}
		})
	}
}

// TestRandomSpread checks that defaults reach across the type's range and
// that every value of a small range is about equally likely.
func TestRandomSpread(t *testing.T) {
	rows, _ := readRows(t, mustBuild(t, "type: datagen\nseed: 3\nschema: [a INT, b BIGINT, c INT]\nfields: {c: {min: 0, max: 9}}\n"), 10000, 1024)
	var bigA, bigB bool
	counts := make([]int, 10)
	for _, r := range rows {
		bigA = bigA || r[0].Int64() > 1<<30 || r[0].Int64() < -(1<<30)
		bigB = bigB || r[1].Int64() > 1<<62 || r[1].Int64() < -(1<<62)
		counts[r[2].Int64()]++
	}
	if !bigA || !bigB {
		t.Errorf("defaults do not span the type range: INT %v BIGINT %v", bigA, bigB)
	}
	for v, c := range counts {
		if c < 850 || c > 1150 {
			t.Errorf("value %d drawn %d times in 10000, want about 1000", v, c)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want []string // each a whole line of the error, in order
	}{
		{"unknown column", "schema: [name STRING]\nfields:\n  nme: {length: 3}",
			[]string{`p.yaml:4:8: sources[0].fields.nme: no column "nme" in the schema; did you mean "name"? (columns: name)`}},
		{"two entries for one column", "schema: [id INT]\nfields:\n  id: {}\n  ID: {}",
			[]string{`p.yaml:4:7: sources[0].fields.id: column "id" is configured twice, as "ID" and as "id"`}},
		{"start on random", "schema: [id INT]\nfields:\n  id: {start: 1, min: 0}",
			[]string{`p.yaml:4:15: sources[0].fields.id.start: start applies only to kind: sequence, and this column is random (the default kind)`}},
		{"min on sequence", "schema: [id INT]\nfields:\n  id: {kind: sequence, start: 1, end: 2, min: 0}",
			[]string{`p.yaml:4:47: sources[0].fields.id.min: min applies only to kind: random; a sequence runs from start to end`}},
		{"length on int", "schema: [id INT]\nfields:\n  id: {length: 3}",
			[]string{`p.yaml:4:16: sources[0].fields.id.length: length applies to STRING, BYTES columns, and id is INT`}},
		{"min on string", "schema: [s STRING]\nfields:\n  s: {min: 3}",
			[]string{`p.yaml:4:12: sources[0].fields.s.min: min applies to INT, BIGINT, DECIMAL, FLOAT, DOUBLE columns, and s is STRING`}},
		{"max_past on int", "schema: [a INT]\nfields:\n  a: {max_past: 1h}",
			[]string{`p.yaml:4:17: sources[0].fields.a.max_past: max_past applies to TIMESTAMP, TIMESTAMP_LTZ, DATE columns, and a is INT`}},
		{"step on int sequence", "schema: [a INT]\nfields:\n  a: {kind: sequence, start: 1, end: 3, step: 1s}",
			[]string{`p.yaml:4:47: sources[0].fields.a.step: step applies to TIMESTAMP, TIMESTAMP_LTZ, DATE columns, and a is INT`}},
		{"end before start", "schema: [a BIGINT]\nfields:\n  a: {kind: sequence, start: 10, end: 9}",
			[]string{`p.yaml:4:39: sources[0].fields.a.end: end 9 is before start 10`}},
		{"timestamp end before start", "schema: [a TIMESTAMP]\nfields:\n  a: {kind: sequence, start: 2024-01-02, end: 2024-01-01}",
			[]string{`p.yaml:4:47: sources[0].fields.a.end: end 2024-01-01 is before start 2024-01-02`}},
		{"missing end", "schema: [a INT]\nfields:\n  a: {kind: sequence, start: 1}",
			[]string{`p.yaml:4:6: sources[0].fields.a.end: missing: a sequence needs start and end`}},
		{"missing start and end", "schema: [a STRING]\nfields:\n  a: {kind: sequence}",
			[]string{`p.yaml:4:6: sources[0].fields.a.start: missing: a sequence needs start and end`,
				`p.yaml:4:6: sources[0].fields.a.end: missing: a sequence needs start and end`}},
		{"unknown kind", "schema: [a INT]\nfields:\n  a: {kind: sequense}",
			[]string{`p.yaml:4:13: sources[0].fields.a.kind: unknown kind "sequense"; did you mean "sequence"? (want random or sequence)`}},
		{"negative max_past", "schema: [a TIMESTAMP]\nfields:\n  a: {max_past: -1d}",
			[]string{`p.yaml:4:17: sources[0].fields.a.max_past: duration "-1d" is negative`}},
		{"sequence of booleans", "schema: [a BOOLEAN]\nfields:\n  a: {kind: sequence, start: 1, end: 2}",
			[]string{`p.yaml:4:13: sources[0].fields.a.kind: a sequence cannot make BOOLEAN values (sequences: INT, BIGINT, DECIMAL, FLOAT, DOUBLE, STRING, TIMESTAMP, TIMESTAMP_LTZ, DATE)`}},
		{"max below min", "schema: [a INT]\nfields:\n  a: {min: 5, max: 4}",
			[]string{`p.yaml:4:20: sources[0].fields.a.max: max 4 is below min 5`}},
		{"float max below min", "schema: [a DOUBLE]\nfields:\n  a: {min: 5}",
			[]string{`p.yaml:4:6: sources[0].fields.a.max: max 1 is below min 5 (unset, min is 0 and max is 1)`}},
		{"min out of range", "schema: [a INT]\nfields:\n  a: {min: 3000000000}",
			[]string{`p.yaml:4:12: sources[0].fields.a.min: cannot parse "3000000000" as INT: out of range`}},
		{"decimal too wide", "schema: [\"a DECIMAL(3, 1)\"]\nfields:\n  a: {max: 100}",
			[]string{`p.yaml:4:12: sources[0].fields.a.max: cannot parse "100" as DECIMAL(3, 1): does not fit DECIMAL(3, 1)`}},
		{"sequence past int64 steps", "schema: [\"a DECIMAL(38, 20)\"]\nfields:\n  a: {kind: sequence, start: 0, end: 0}",
			[]string{`p.yaml:4:13: sources[0].fields.a.kind: a sequence over DECIMAL(38, 20) counts by 1 = 10^20 units, past int64; use a scale of at most 18`}},
		{"bound past int64", "schema: [\"a DECIMAL(38, 2)\"]\nfields:\n  a: {max: 100000000000000000000}",
			[]string{`p.yaml:4:12: sources[0].fields.a.max: cannot parse "100000000000000000000" as DECIMAL(38, 2): its unscaled value at scale 2 needs more than 64 bits`}},
		{"null_rate above 1", "schema: [a INT]\nfields:\n  a: {null_rate: 1.5}",
			[]string{`p.yaml:4:18: sources[0].fields.a.null_rate: want a share between 0 and 1, got 1.5`}},
		{"null_rate on NOT NULL", "schema: [a INT NOT NULL]\nfields:\n  a: {null_rate: 0.1}",
			[]string{`p.yaml:4:18: sources[0].fields.a.null_rate: column a is NOT NULL`}},
		{"length beyond varchar", "schema: [a VARCHAR(5)]\nfields:\n  a: {length: 6}",
			[]string{`p.yaml:4:15: sources[0].fields.a.length: 6 is longer than VARCHAR(5) holds`}},
		{"sequence text beyond varchar", "schema: [a VARCHAR(2)]\nfields:\n  a: {kind: sequence, start: 1, end: 100}",
			[]string{`p.yaml:4:38: sources[0].fields.a.end: 100 does not fit VARCHAR(2)`}},
		{"step finer than precision", "schema: [a TIMESTAMP(0)]\nfields:\n  a: {kind: sequence, start: 2024-01-01, step: 500ms}",
			[]string{`p.yaml:4:48: sources[0].fields.a.step: 500ms is finer than TIMESTAMP(0) holds`}},
		{"start finer than precision", "schema: [a TIMESTAMP(1)]\nfields:\n  a: {kind: sequence, start: \"2024-01-01 00:00:00.25\"}",
			[]string{`p.yaml:4:30: sources[0].fields.a.start: "2024-01-01 00:00:00.25" is finer than TIMESTAMP(1) holds`}},
		{"bad timestamp", "schema: [a TIMESTAMP_LTZ]\nfields:\n  a: {kind: sequence, start: yesterday}",
			[]string{`p.yaml:4:30: sources[0].fields.a.start: cannot parse "yesterday" as TIMESTAMP_LTZ(3)`}},
		{"date step in hours", "schema: [a DATE]\nfields:\n  a: {kind: sequence, start: 2024-01-01, step: 36h}",
			[]string{`p.yaml:4:48: sources[0].fields.a.step: 36h0m0s is finer than DATE holds`}},
		{"date max_past in hours", "schema: [a DATE]\nfields:\n  a: {max_past: 36h}",
			[]string{`p.yaml:4:17: sources[0].fields.a.max_past: DATE values move by whole days: want a multiple of 24h, such as 30d`}},
		{"misspelt option", "schema: [a STRING]\nfields:\n  a: {lenght: 3}",
			[]string{`p.yaml:4:7: sources[0].fields.a.lenght: unknown key; did you mean "length"?`}},
		{"misspelt top-level key", "row: 5\nschema: [a INT]",
			[]string{`p.yaml:2:1: sources[0].row: unknown key; did you mean "rows"?`}},
		{"negative rows", "rows: -1\nschema: [a INT]",
			[]string{`p.yaml:2:7: sources[0].rows: must be >= 0, got -1`}},
		{"negative rate", "rate: -5\nschema: [a INT]",
			[]string{`p.yaml:2:7: sources[0].rate: must be >= 0 rows per second (0: as fast as possible), got -5`}},
		{"rate not a number", "rate: .nan\nschema: [a INT]",
			[]string{`p.yaml:2:7: sources[0].rate: want a number, got ".nan"`}},
		{"no columns", "rows: 1\nschema: []",
			[]string{`p.yaml:3:9: sources[0].schema: datagen needs at least one column to generate`}},
		{"several at once", "rows: -1\nschema: [a INT, b INT]\nfields:\n  a: {max_past: 1s}\n  b: {kind: sequence, start: 2, end: 1}",
			[]string{`p.yaml:2:7: sources[0].rows: must be >= 0, got -1`,
				`p.yaml:5:17: sources[0].fields.a.max_past: max_past applies to TIMESTAMP, TIMESTAMP_LTZ, DATE columns, and a is INT`,
				`p.yaml:6:38: sources[0].fields.b.end: end 1 is before start 2`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := build(t, "type: datagen\n"+tc.src+"\n")
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			var list spec.List
			if !errors.As(err, &list) {
				t.Fatalf("error %T is not a spec.List: %v", err, err)
			}
			if got := strings.Split(err.Error(), "\n"); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("error:\n%s\nwant:\n%s", err, strings.Join(tc.want, "\n"))
			}
		})
	}
}
