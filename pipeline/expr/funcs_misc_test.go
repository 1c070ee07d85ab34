package expr

import (
	"regexp"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

func TestMiscFunctions(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"GREATEST(1, 3, 2)", "INT NOT NULL 3"},
		{"LEAST(1, 3, 2)", "INT NOT NULL 1"},
		{"GREATEST(n, 2.5)", "DECIMAL(11, 1) NOT NULL 42.0"},
		{"GREATEST(temp, n)", "DOUBLE 42.0"},
		{"LEAST('b', 'a', 'c')", "STRING NOT NULL a"},
		{"GREATEST(n, x_i, 1)", "INT null"},
		{"GREATEST(NULL, 1)", "INT null"},
		{"LEAST(ts, TIMESTAMP '2000-01-01 00:00:00')", "TIMESTAMP(3) 2000-01-01T00:00"},
		{"GREATEST(day, DATE '2030-01-01')", "DATE 2030-01-01"},
		{"GREATEST(id, 1)", "error: GREATEST: STRING and INT have no common type"},
		{"SHA224('')", "STRING NOT NULL d14a028c2a3a2bc9476102bb288234c415a2b01f828ea62ac5b3e42f"},
		{"SHA256('abc')", "STRING NOT NULL ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"SHA2('abc', 256)", "STRING ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"SHA2('abc', 224)", "STRING 23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7"},
		{"SHA2('abc', 100)", "STRING null"},
		{"SHA2(x_s, 256)", "STRING null"},
		{"SHA2('abc', x_i)", "STRING null"},
		{"SHA384('')", "STRING NOT NULL 38b060a751ac96384cd9327eb1b1e36a21fdb71114be07434c0cc7bf63f6e1da274edebfe76f65fbd51ad2f14898b95b"},
		{"CONVERT_TZ('1970-01-01 00:00:00', 'UTC', 'America/Los_Angeles')", "STRING 1969-12-31 16:00:00"},
		{"CONVERT_TZ('2024-07-01 12:00:00', 'Europe/Berlin', 'UTC')", "STRING 2024-07-01 10:00:00"},
		{"CONVERT_TZ('2024-01-01 12:00:00', 'GMT+05:30', 'GMT-01:00')", "STRING 2024-01-01 05:30:00"},
		{"CONVERT_TZ('2024-01-01', 'UTC', 'UTC')", "STRING null"},
		{"CONVERT_TZ('2024-07-01 12:00:00', 'UTC', 'PST')", "STRING 2024-07-01 05:00:00"},
		{"CONVERT_TZ('2024-07-01 12:00:00', 'UTC', 'EST')", "STRING 2024-07-01 07:00:00"},
		{"CONVERT_TZ(x_s, 'UTC', 'UTC')", "STRING null"},
		{"CONVERT_TZ('2024-01-01 00:00:00', 'Mars/Base', 'UTC')", "error: unknown time zone \"Mars/Base\""},
		{"CONVERT_TZ('2024-01-01 00:00:00', id, 'UTC')", "STRING null"},
	})
}

// TestUUID: UUID() gives a new version-4 UUID per call, is never folded,
// and marks the expression non-deterministic like the clock functions.
func TestUUID(t *testing.T) {
	c, err := compileText(t, "UUID()")
	if err != nil {
		t.Fatal(err)
	}
	if c.Const || c.Clock != "UUID()" || c.Type != (row.Type{ID: row.String, NotNull: true}) {
		t.Fatalf("UUID(): Const %v, Clock %q, Type %s", c.Const, c.Clock, c.Type)
	}
	shape := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		v, err := c.Eval(testRow)
		if err != nil {
			t.Fatal(err)
		}
		if !shape.MatchString(v.Str()) || seen[v.Str()] {
			t.Fatalf("UUID() gave %q (bad shape or repeated)", v.Str())
		}
		seen[v.Str()] = true
	}
	c, err = compileText(t, "UPPER(UUID()) || id")
	if err != nil {
		t.Fatal(err)
	}
	if c.Clock != "UUID()" {
		t.Fatalf("UUID() inside an expression: Clock %q", c.Clock)
	}
}

func TestTimestampAddDiff(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"TIMESTAMPADD(DAY, 1, ts)", "TIMESTAMP(3) 2024-01-03T10:30:45.123"},
		{"TIMESTAMPADD(week, 1, DATE '2003-01-02')", "DATE NOT NULL 2003-01-09"},
		{"TIMESTAMPADD(HOUR, -2, day)", "TIMESTAMP(6) 2024-01-01T22:00"},
		{"TIMESTAMPADD(MONTH, 1, DATE '2024-01-31')", "DATE NOT NULL 2024-02-29"},
		{"TIMESTAMPADD(MONTH, 1, DATE '2023-01-31')", "DATE NOT NULL 2023-02-28"},
		{"TIMESTAMPADD(YEAR, 1, TIMESTAMP '2024-02-29 12:00:00')", "TIMESTAMP(0) NOT NULL 2025-02-28T12:00"},
		{"TIMESTAMPADD(QUARTER, -1, DATE '2024-05-31')", "DATE NOT NULL 2024-02-29"},
		{"TIMESTAMPADD(SQL_TSI_MINUTE, 90, lts)", "TIMESTAMP_LTZ(3) 2024-01-02T12:00:45.123Z"},
		{"TIMESTAMPADD(SECOND, x_i, ts)", "TIMESTAMP(3) null"},
		{"TIMESTAMPADD(DAY, 1, x_ts)", "TIMESTAMP(3) null"},
		{"TIMESTAMPADD(FORTNIGHT, 1, ts)", "error: unknown time unit FORTNIGHT"},
		{"TIMESTAMPADD('DAY', 1, ts)", "error: TIMESTAMPADD needs a time unit keyword first"},
		{"TIMESTAMPADD(DAY, 1.5, ts)", "error: TIMESTAMPADD argument 2 must be an integer"},
		{"TIMESTAMPADD(DAY, 1, id)", "error: TIMESTAMPADD argument 3 must be a DATE, TIMESTAMP or TIMESTAMP_LTZ"},
		{"TIMESTAMPDIFF(DAY, TIMESTAMP '2003-01-02 10:00:00', TIMESTAMP '2003-01-03 10:00:00')", "INT NOT NULL 1"},
		{"TIMESTAMPDIFF(DAY, TIMESTAMP '2003-01-02 10:00:00', TIMESTAMP '2003-01-03 09:59:59')", "INT NOT NULL 0"},
		{"TIMESTAMPDIFF(HOUR, TIMESTAMP '2003-01-03 10:00:00', TIMESTAMP '2003-01-02 08:30:00')", "INT NOT NULL -25"},
		{"TIMESTAMPDIFF(SECOND, TIMESTAMP '2003-01-02 10:00:00.999', TIMESTAMP '2003-01-02 10:00:02')", "INT NOT NULL 1"},
		{"TIMESTAMPDIFF(MONTH, DATE '2024-01-31', DATE '2024-02-29')", "INT NOT NULL 1"},
		{"TIMESTAMPDIFF(MONTH, DATE '2024-01-30', DATE '2024-02-29')", "INT NOT NULL 1"},
		{"TIMESTAMPDIFF(MONTH, DATE '2024-02-29', DATE '2024-03-28')", "INT NOT NULL 0"},
		{"TIMESTAMPDIFF(MONTH, TIMESTAMP '2024-01-15 12:00:00', TIMESTAMP '2024-03-15 11:00:00')", "INT NOT NULL 1"},
		{"TIMESTAMPDIFF(MONTH, TIMESTAMP '2024-01-15 12:00:00', TIMESTAMP '2024-03-15 12:00:00')", "INT NOT NULL 2"},
		{"TIMESTAMPDIFF(YEAR, DATE '2000-02-29', DATE '2024-02-28')", "INT NOT NULL 23"},
		{"TIMESTAMPDIFF(YEAR, DATE '2024-02-28', DATE '2000-02-29')", "INT NOT NULL -23"},
		{"TIMESTAMPDIFF(QUARTER, DATE '2024-01-01', DATE '2024-12-31')", "INT NOT NULL 3"},
		{"TIMESTAMPDIFF(DAY, day, ts)", "INT 0"},
		{"TIMESTAMPDIFF(MINUTE, x_ts, ts)", "INT null"},
		{"TIMESTAMPDIFF(DAY, id, ts)", "error: TIMESTAMPDIFF argument 2 must be a DATE"},
	})
}

func TestIntervalArithmetic(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"ts + INTERVAL '1' DAY", "TIMESTAMP(3) 2024-01-03T10:30:45.123"},
		{"day - INTERVAL '1' DAY", "DATE 2024-01-01"},
		{"ts + INTERVAL '1' MONTH", "TIMESTAMP(3) 2024-02-02T10:30:45.123"},
		{"DATE '2024-01-31' + INTERVAL '1' MONTH", "DATE NOT NULL 2024-02-29"},
		{"DATE '2024-03-31' - INTERVAL '1' MONTH", "DATE NOT NULL 2024-02-29"},
		{"INTERVAL '2' YEAR + DATE '2024-02-29'", "DATE NOT NULL 2026-02-28"},
		{"DATE '2024-01-15' + INTERVAL '1-6' YEAR TO MONTH", "DATE NOT NULL 2025-07-15"},
		{"DATE '2024-01-15' - INTERVAL '-1' YEAR", "DATE NOT NULL 2025-01-15"},
		{"lts - INTERVAL '13' MONTHS", "TIMESTAMP_LTZ(3) 2022-12-02T10:30:45.123Z"},
		{"x_ts + INTERVAL '1' YEAR", "TIMESTAMP(3) null"},
		{"DATE '2024-01-15' + (INTERVAL '1' YEAR + INTERVAL '1' MONTH)", "DATE NOT NULL 2025-02-15"},
		{"DATE '2024-01-15' + -INTERVAL '1' MONTH", "DATE NOT NULL 2023-12-15"},
		{"n + INTERVAL '1' MONTH", "error: cannot apply + to INT and INTERVAL"},
		{"INTERVAL '1' MONTH", "error: an INTERVAL is not a value here"},
		{"INTERVAL '1' MONTH + INTERVAL '1' DAY", "error: cannot apply + to INTERVAL and INTERVAL"},
		{"ts < ts + INTERVAL '1' MONTH", "BOOLEAN true"},
	})
}

// TestFlinkDocumentedCases pins exact outputs and NULL cases, as Flink
// documents them, of UNIX_TIMESTAMP, TO_DATE, the hashes, IF and IFNULL,
// INITCAP, LPAD and RPAD, and REGEXP_REPLACE.
func TestFlinkDocumentedCases(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"UNIX_TIMESTAMP('1970-01-01 08:00:01.001', 'yyyy-MM-dd HH:mm:ss.SSS')", "BIGINT NOT NULL 28801"},
		{"UNIX_TIMESTAMP('1970-01-01 08:00:01.001 +0800', 'yyyy-MM-dd HH:mm:ss.SSS X')", "BIGINT NOT NULL 1"},
		{"UNIX_TIMESTAMP('1970-01-01 08:00:01.001', 'yyyy-MM-dd HH:mm:ss.SSS X')", "BIGINT NOT NULL -9223372036854775808"},
		{"UNIX_TIMESTAMP(x_s, 'yyyy')", "BIGINT null"},
		{"TO_DATE('2024-13-01')", "DATE null"},
		{"TO_DATE(x_s)", "DATE null"},
		{"TO_DATE('20240102', 'yyyyMMdd')", "DATE 2024-01-02"},
		{"SHA1('abc')", "STRING NOT NULL a9993e364706816aba3e25717850c26c9cd0d89d"},
		{"SHA512('')", "STRING NOT NULL cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"},
		{"MD5(x_s)", "STRING null"},
		{"IFNULL(x_s, 'dflt')", "STRING NOT NULL dflt"},
		{"IFNULL(x_s, x_s)", "STRING null"},
		{"IF(5 > 3, 5, 3)", "INT NOT NULL 5"},
		{"IF(x_b, 1, x_i)", "INT null"},
		{"INITCAP('hi THOMAS')", "STRING NOT NULL Hi Thomas"},
		{"INITCAP(x_s)", "STRING null"},
		{"LPAD('hi', 4, '??')", "STRING ??hi"},
		{"LPAD('hi', 1, '??')", "STRING h"},
		{"LPAD('hello', 5, '')", "STRING null"}, // an empty pad is NULL even with nothing to pad, as in Flink
		{"RPAD('hi', 4, '??')", "STRING hi??"},
		{"RPAD(x_s, 4, '?')", "STRING null"},
		{"REGEXP_REPLACE('foobar', 'oo|ar', '')", "STRING NOT NULL fb"},
		{"REGEXP_REPLACE(x_s, 'a', 'b')", "STRING null"},
		// Java replaces the empty match right after a non-empty one too
		// (fn-flink-regexp-replace-empty).
		{"REGEXP_REPLACE('abc', '[a-z]*', 'X')", "STRING NOT NULL XX"},
		{"REGEXP_REPLACE('ab x', 'x*', '-')", "STRING NOT NULL -a-b- --"},
		{"REGEXP_REPLACE('abc', '(abc)|([a-z]*)', '$1')", "STRING NOT NULL $1$1"},
	})
}
