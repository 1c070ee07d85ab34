package pipeline_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestScalarFunctionsEndToEnd runs the JSON, time, conditional, string
// and hash functions through a whole pipeline (file source, SQL
// transform, CSV file sink) and checks the rows written, NULLs included.
func TestScalarFunctionsEndToEnd(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	data := `a,"{""user"":{""id"":""7"",""tags"":[1,2]}}",2024-01-31 10:00:00
b,not json,2024-02-29 23:30:00
`
	if err := os.WriteFile(in, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.csv")
	runFile(t, dir, `version: 1
name: funcs
sources:
  - name: src
    type: file
    path: `+in+`
    schema: [k STRING, doc STRING, ts TIMESTAMP(3)]
transforms:
  - name: q
    sql: |
      SELECT k,
        JSON_VALUE(doc, '$.user.id' RETURNING INT DEFAULT -1 ON ERROR) + 1 AS uid,
        JSON_QUERY(doc, '$.user.tags') AS tags,
        JSON_EXISTS(doc, '$.user') AS has_user,
        JSON_OBJECT(KEY 'k' VALUE k, KEY 'n' VALUE JSON_ARRAY(1, NULL)) AS obj,
        TIMESTAMPADD(MONTH, 1, ts) AS next_month,
        ts + INTERVAL '1' YEAR AS next_year,
        TIMESTAMPDIFF(HOUR, ts, TIMESTAMP '2024-03-01 00:00:00') AS hours_left,
        CONVERT_TZ(DATE_FORMAT(ts, 'yyyy-MM-dd HH:mm:ss'), 'UTC', 'Asia/Kolkata') AS ist,
        GREATEST(CHAR_LENGTH(doc), 10) AS g,
        LEAST(k, 'a') AS l,
        IF(k = 'a', 'first', 'other') AS which,
        IFNULL(JSON_VALUE(doc, '$.none'), '-') AS dflt,
        LPAD(k, 3, '*') || RPAD(k, 3, '.') AS padded,
        INITCAP('hello ' || k) AS title,
        REGEXP_REPLACE(doc, '[0-9]', '#') AS masked,
        SHA2(k, 256) = SHA256(k) AS same_hash,
        MD5(k) AS md5,
        TO_DATE('2024-05-06') AS d,
        UNIX_TIMESTAMP('2024-01-01 00:00:01', 'yyyy-MM-dd HH:mm:ss') AS unix,
        UUID() AS uid4
      FROM src
sinks:
  - name: out
    from: q
    type: file
    path: `+out+`
`)
	lines := readLines(t, out)
	if len(lines) != 2 {
		t.Fatalf("wrote %d lines, want 2: %q", len(lines), lines)
	}
	uuid := regexp.MustCompile(`,[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	want := []string{
		`a,8,"[1,2]",true,"{""k"":""a"",""n"":[1]}",2024-02-29 10:00:00,2025-01-31 10:00:00,710,2024-01-31 15:30:00,32,a,first,-,**aa..,Hello A,"{""user"":{""id"":""#"",""tags"":[#,#]}}",true,0cc175b9c0f1b6a831c399e269772661,2024-05-06,1704067201`,
		`b,0,,false,"{""k"":""b"",""n"":[1]}",2024-03-29 23:30:00,2025-02-28 23:30:00,0,2024-03-01 05:00:00,10,a,other,-,**bb..,Hello B,not json,true,92eb5ffee6ae2fec3ad71c777531578f,2024-05-06,1704067201`,
	}
	for i, line := range lines {
		if !uuid.MatchString(line) {
			t.Errorf("line %d does not end with a UUID: %s", i+1, line)
			continue
		}
		if got := uuid.ReplaceAllString(line, ""); got != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i+1, got, want[i])
		}
	}
	if strings.Count(lines[0], "-4") == 0 {
		t.Errorf("no version-4 UUID in %s", lines[0])
	}
}
