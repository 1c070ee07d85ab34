package expr

import (
	"testing"
)

func TestStringFunctions(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"UPPER(id)", "STRING NOT NULL SENSOR-1"},
		{"LOWER('AbC')", "STRING NOT NULL abc"},
		{"UPPER(x_s)", "STRING null"},
		{"INITCAP('hello wORLD 2nd')", "STRING NOT NULL Hello World 2nd"},
		{"INITCAP('ÄÖü öX ß-ab')", "STRING NOT NULL ÄÖü öX ß-Ab"},
		{"UPPER('straße ä')", "STRING NOT NULL STRASSE Ä"},
		{"REVERSE('abc')", "STRING NOT NULL cba"},
		{"CHAR_LENGTH('héllo')", "INT NOT NULL 5"},
		{"CHARACTER_LENGTH(x_s)", "INT null"},
		{"SUBSTRING('hello', 2)", "STRING NOT NULL ello"},
		{"SUBSTRING('hello', 2, 3)", "STRING ell"},
		{"SUBSTRING('hello' FROM 2 FOR 3)", "STRING ell"},
		{"SUBSTRING('hello', -3)", "STRING NOT NULL llo"},
		{"SUBSTRING('hello', 0, 2)", "STRING he"},
		{"SUBSTRING('hello', 10)", "STRING NOT NULL "},
		{"SUBSTRING('hello', 2, -1)", "STRING null"},
		{"SUBSTR('héllo', 2, 2)", "STRING él"},
		{"SUBSTRING(x_s, 1)", "STRING null"},
		{"SUBSTRING(id, 'a')", "error: SUBSTRING argument 2 must be an integer, not STRING"},
		{"POSITION('l' IN 'hello')", "INT NOT NULL 3"},
		{"POSITION('z' IN 'hello')", "INT NOT NULL 0"},
		{"POSITION('' IN 'hello')", "INT NOT NULL 1"},
		{"POSITION('l' IN 'héllo')", "INT NOT NULL 3"},
		{"LOCATE('l', 'hello', 4)", "INT NOT NULL 4"},
		{"REPLACE('a-b-c', '-', '+')", "STRING NOT NULL a+b+c"},
		{"REPLACE('abc', '', '-')", "STRING NOT NULL -a-b-c-"},
		{"TRIM('  x  ')", "STRING NOT NULL x"},
		{"TRIM(LEADING 'x' FROM 'xxaxx')", "STRING NOT NULL axx"},
		{"TRIM(TRAILING 'x' FROM 'xxaxx')", "STRING NOT NULL xxa"},
		{"TRIM(BOTH 'xy' FROM 'xyaxy')", "STRING NOT NULL a"},
		{"TRIM(x_s)", "STRING null"},
		{"LTRIM('  a ')", "STRING NOT NULL a "},
		{"RTRIM(' a  ')", "STRING NOT NULL  a"},
		{"CONCAT('a', id, 'b')", "STRING NOT NULL asensor-1b"},
		{"CONCAT('a', x_s)", "STRING null"},
		{"CONCAT('a', n)", "error: CONCAT argument 2 must be a STRING, not INT"},
		{"'a' || 'b'", "STRING NOT NULL ab"},
		{"id || x_s", "STRING null"},
		{"id || n", "error: || joins strings, not STRING and INT"},
		{"CONCAT_WS('-', 'a', x_s, 'b')", "STRING NOT NULL a-b"},
		{"CONCAT_WS(x_s, 'a')", "STRING null"},
		{"LPAD('hi', 5, 'xy')", "STRING xyxhi"},
		{"RPAD('hi', 5, 'xy')", "STRING hixyx"},
		{"LPAD('hello', 3, 'x')", "STRING hel"},
		{"LPAD('hi', -1, 'x')", "STRING null"},
		{"LPAD('hi', 4, '')", "STRING null"},
		{"REPEAT('ab', 3)", "STRING NOT NULL ababab"},
		{"LEFT('héllo', 2)", "STRING NOT NULL hé"},
		{"RIGHT('héllo', 3)", "STRING NOT NULL llo"},
		{"RIGHT('ab', 5)", "STRING NOT NULL ab"},
		{"LEFT('ab', -1)", "STRING NOT NULL "},
		{"REPEAT('ab', 0)", "STRING NOT NULL "},
		{"REPEAT('ab', 999999999999)", "error: longer than"},
		{"SPLIT_INDEX('a,b,c', ',', 1)", "STRING b"},
		{"SPLIT_INDEX('a,b,c', ',', 3)", "STRING null"},
		{"SPLIT_INDEX('a,,c', ',', 1)", "STRING "},
		{"SPLIT_INDEX('a,b', ',', -1)", "STRING null"},
		{"SPLIT_INDEX('a::b::c', '::', 2)", "STRING c"},
		{"SPLIT_INDEX(x_s, ',', 0)", "STRING null"},
		{"ASCII('A')", "INT NOT NULL 65"},
		{"CHR(65)", "STRING A"},
		{"ASCII('Ä')", "INT NOT NULL -61"},
		{"CHR(300)", "STRING ,"},
		{"CHR(-1)", "STRING "},
		{"MD5('')", "STRING NOT NULL d41d8cd98f00b204e9800998ecf8427e"},
		{"TO_BASE64('hi')", "STRING NOT NULL aGk="},
		{"FROM_BASE64('aGk=')", "STRING NOT NULL hi"},
		{"FROM_BASE64(id)", "error: invalid base64"},
	})
}

func TestLike(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"id LIKE 'sensor%'", "BOOLEAN NOT NULL true"},
		{"id LIKE '%-1'", "BOOLEAN NOT NULL true"},
		{"id LIKE '%nso%'", "BOOLEAN NOT NULL true"},
		{"id LIKE 'sensor-_'", "BOOLEAN NOT NULL true"},
		{"id LIKE 's_n%r-1'", "BOOLEAN NOT NULL true"},
		{"id LIKE 'sensor'", "BOOLEAN NOT NULL false"},
		{"id LIKE 'SENSOR%'", "BOOLEAN NOT NULL false"},
		{"id NOT LIKE 'x%'", "BOOLEAN NOT NULL true"},
		{"'a%b' LIKE 'a\\%b' ESCAPE '\\'", "BOOLEAN NOT NULL true"},
		{"'axb' LIKE 'a\\%b' ESCAPE '\\'", "BOOLEAN NOT NULL false"},
		{"'a_c' LIKE 'a!_c' ESCAPE '!'", "BOOLEAN NOT NULL true"},
		{"'abc' LIKE 'a!_c' ESCAPE '!'", "BOOLEAN NOT NULL false"},
		{"'a!c' LIKE 'a!!c' ESCAPE '!'", "BOOLEAN NOT NULL true"},
		{"id LIKE pat", "BOOLEAN true"},
		{"id NOT LIKE pat", "BOOLEAN false"},
		{"x_s LIKE 'a'", "BOOLEAN null"},
		{"id LIKE x_s", "BOOLEAN null"},
		{"'héllo' LIKE 'h_llo'", "BOOLEAN NOT NULL true"},
		{"'abcabc' LIKE '%bc%bc'", "BOOLEAN NOT NULL true"},
		{"'ab' LIKE 'a%b%'", "BOOLEAN NOT NULL true"},
		{"'aXbXc' LIKE 'a%b%c'", "BOOLEAN NOT NULL true"},
		{"'abc' LIKE '%c%c'", "BOOLEAN NOT NULL false"},
		{"'abc' LIKE 'a%_%c'", "BOOLEAN NOT NULL true"},
		{"'ac' LIKE 'a%_%c'", "BOOLEAN NOT NULL false"},
		{"'' LIKE '%'", "BOOLEAN NOT NULL true"},
		{"'' LIKE '_'", "BOOLEAN NOT NULL false"},
		{"'aaa' LIKE '%a%a%a%'", "BOOLEAN NOT NULL true"},
		{"'aa' LIKE '%a%a%a%'", "BOOLEAN NOT NULL false"},
		{"'abc' LIKE 'a!xc' ESCAPE '!'", "error: invalid escape sequence"},
		{"n LIKE 'a'", "error: LIKE needs a STRING, not INT"},
		{"id LIKE 'a' ESCAPE 'xy'", "error: the LIKE escape must be one character"},
	})
}

// TestLikeMatcher checks the matcher against a brute-force reference on
// every pattern over a small alphabet.
func TestLikeMatcher(t *testing.T) {
	var ref func(s, p []rune) bool
	ref = func(s, p []rune) bool {
		if len(p) == 0 {
			return len(s) == 0
		}
		switch p[0] {
		case '%':
			for i := 0; i <= len(s); i++ {
				if ref(s[i:], p[1:]) {
					return true
				}
			}
			return false
		case '_':
			return len(s) > 0 && ref(s[1:], p[1:])
		}
		return len(s) > 0 && s[0] == p[0] && ref(s[1:], p[1:])
	}
	var all func(n int, alphabet string) []string
	all = func(n int, alphabet string) []string {
		if n == 0 {
			return []string{""}
		}
		out := []string{""}
		for _, w := range all(n-1, alphabet) {
			for _, c := range alphabet {
				out = append(out, w+string(c))
			}
		}
		return out
	}
	uniq := func(xs []string) []string {
		seen := map[string]bool{}
		var out []string
		for _, x := range xs {
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
		return out
	}
	texts := uniq(all(4, "abé"))
	pats := uniq(all(4, "a%_é"))
	for _, p := range pats {
		lp, err := parseLike(p, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range texts {
			if got, want := lp.match(s), ref([]rune(s), []rune(p)); got != want {
				t.Fatalf("%q LIKE %q = %v, want %v", s, p, got, want)
			}
		}
	}
}

func TestRegexpFunctions(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"REGEXP('abc123', '[0-9]+')", "BOOLEAN NOT NULL true"},
		{"REGEXP('abc', '^b')", "BOOLEAN NOT NULL false"},
		{"REGEXP(x_s, 'a')", "BOOLEAN null"},
		{"REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)', 2)", "STRING bar"},
		{"REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)', 1)", "STRING the"},
		{"REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)')", "STRING foothebar"},
		{"REGEXP_EXTRACT('x', 'y')", "STRING null"},
		{"REGEXP_EXTRACT('ab', '(a)|(b)', 2)", "STRING null"},
		{"REGEXP_EXTRACT('user=bob id=7', 'id=(\\d+)', 1)", "STRING 7"},
		{"REGEXP_EXTRACT('k=v', '(?<key>\\w+)=(?<val>\\w+)', 2)", "STRING v"},
		{"REGEXP_EXTRACT('ab', '(a)', 2)", "error: group 2 does not exist; the pattern has 1"},
		{"REGEXP_EXTRACT(id, js)", "STRING null"},
		{"REGEXP_EXTRACT(id, CONCAT('s', '(e)n'), 1)", "STRING e"},
		{"REGEXP_REPLACE('a1b22', '[0-9]+', '#')", "STRING NOT NULL a#b#"},
		// The replacement is literal, as in Flink 2.3 (Java's
		// Matcher.quoteReplacement): no group references.
		{"REGEXP_REPLACE('2024-01-02', '(\\d+)-(\\d+)-(\\d+)', '$3/$2/$1')", "STRING NOT NULL $3/$2/$1"},
		{"REGEXP_REPLACE('a.b', '\\.', '\\$')", "STRING NOT NULL a\\$b"},
		{"REGEXP_REPLACE('abc', 'b', 'x$')", "STRING NOT NULL ax$c"},
		{"REGEXP_REPLACE(id, pat, 'X')", "STRING sensor-1"},
		{"REGEXP_REPLACE(id, 'a(', 'X')", "error: invalid regular expression"},
		{"REGEXP(id, '(a)\\1')", "error: RE2 syntax"},
	})
}

func TestJSONValue(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"JSON_VALUE(js, '$.a.b[0]')", "STRING 10"},
		{"JSON_VALUE(js, '$.a.b[1].c')", `STRING x"y`},
		{"JSON_VALUE(js, '$.a.n')", "STRING null"},
		{"JSON_VALUE(js, '$.a.t')", "STRING true"},
		{"JSON_VALUE(js, '$[''k y'']')", "STRING 1.5E+3"},
		{"JSON_VALUE(js, '$.\"k y\"')", "STRING 1.5E+3"},
		{"JSON_VALUE(js, 'lax $.a.t')", "STRING true"},
		{"JSON_VALUE(js, '$.a')", "STRING null"},
		{"JSON_VALUE(js, '$.zz')", "STRING null"},
		{"JSON_VALUE(js, '$.a.b[5]')", "STRING null"},
		{"JSON_VALUE(js, '$.a.b.c')", "STRING null"},
		{"JSON_VALUE('not json', '$.a')", "STRING null"},
		{"JSON_VALUE('{\"a\":1', '$.a')", "STRING null"},
		{"JSON_VALUE(' [1, [2, 3], {\"x\": \"\\u00e9\"}] ', '$[2].x')", "STRING é"},
		{"JSON_VALUE(x_s, '$.a')", "STRING null"},
		{"CAST(JSON_VALUE(js, '$.a.b[0]') AS INT) + 1", "INT 11"},
		{"JSON_VALUE(js, id)", "error: JSON_VALUE argument 2 (the JSON path) must be a constant"},
		{"JSON_VALUE(js, '$.a[x]')", "error: expected an array index"},
		{"JSON_VALUE(js, '$.*')", "STRING null"},
	})
}

func TestMathFunctions(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"ABS(neg)", "INT 7"},
		{"ABS(dneg)", "DECIMAL(10, 2) 12.55"},
		{"ABS(-temp)", "DOUBLE 31.5"},
		{"ABS(x_i)", "INT null"},
		{"ABS(id)", "error: ABS argument 1 must be a number, not STRING"},
		{"ROUND(2.675e0, 2)", "DOUBLE NOT NULL 2.68"},
		{"ROUND(temp)", "DOUBLE 32.0"},
		{"ROUND(-temp)", "DOUBLE -32.0"},
		{"ROUND(1.005e0, 2)", "DOUBLE NOT NULL 1.01"},
		{"ROUND(123.456e0, -1)", "DOUBLE NOT NULL 120.0"},
		{"ROUND(0.0004e0, 3)", "DOUBLE NOT NULL 0.0"},
		{"ROUND(d, 1)", "DECIMAL(10, 1) 12.5"},
		{"ROUND(dneg, 1)", "DECIMAL(10, 1) -12.6"},
		{"ROUND(dneg)", "DECIMAL(9, 0) -13"},
		{"ROUND(d, 5)", "DECIMAL(10, 2) 12.50"},
		{"ROUND(d, -1)", "DECIMAL(9, 0) 10"},
		{"ROUND(15.5, -1)", "DECIMAL(3, 0) NOT NULL 20"},
		{"ROUND(14.5, -1)", "DECIMAL(3, 0) NOT NULL 10"},
		{"ROUND(1234, -2)", "INT NOT NULL 1200"},
		{"ROUND(1250, -2)", "INT NOT NULL 1300"},
		{"ROUND(-1250, -2)", "INT NOT NULL -1300"},
		{"ROUND(n, 2)", "INT NOT NULL 42"},
		{"ROUND(d, n)", "error: must be a constant"},
		{"TRUNCATE(temp)", "DOUBLE 31.0"},
		{"TRUNCATE(dneg, 1)", "DECIMAL(10, 1) -12.5"},
		{"TRUNCATE(1299, -2)", "INT NOT NULL 1200"},
		{"FLOOR(temp)", "DOUBLE 31.0"},
		{"CEIL(temp)", "DOUBLE 32.0"},
		{"CEILING(-temp)", "DOUBLE -31.0"},
		{"FLOOR(dneg)", "DECIMAL(10, 0) -13"},
		{"CEIL(dneg)", "DECIMAL(10, 0) -12"},
		{"CEIL(d)", "DECIMAL(10, 0) 13"},
		{"FLOOR(n)", "INT NOT NULL 42"},
		{"POWER(2, 10)", "DOUBLE NOT NULL 1024.0"},
		{"SQRT(16)", "DOUBLE NOT NULL 4.0"},
		{"LN(-1)", "DOUBLE NOT NULL NaN"},
		{"LOG10(1000)", "DOUBLE NOT NULL 3.0"},
		{"LOG(2, 8)", "DOUBLE NOT NULL 3.0"},
		{"EXP(0)", "DOUBLE NOT NULL 1.0"},
		{"SIGN(neg)", "INT -1"},
		{"SIGN(dneg)", "DECIMAL(10, 2) -1.00"},
		{"SIGN(temp)", "DOUBLE 1.0"},
		{"PI()", "DOUBLE NOT NULL 3.141592653589793"},
		{"MOD(neg, 5)", "INT -2"},
		{"MOD(d, 0)", "error: division by zero"},
		{"SQRT(x_d)", "DOUBLE null"},
	})
}

func TestTimeFunctions(t *testing.T) {
	runEvalCases(t, []evalCase{
		{"DATE_FORMAT(ts, 'yyyy-MM-dd HH:mm:ss')", "STRING 2024-01-02 10:30:45"},
		{"DATE_FORMAT(ts, 'yyyyMMdd')", "STRING 20240102"},
		{"DATE_FORMAT(ts, 'EEE, d MMM yyyy hh:mm a')", "STRING Tue, 2 Jan 2024 10:30 AM"},
		{"DATE_FORMAT(ts, 'EEEE MMMM')", "STRING Tuesday January"},
		{"DATE_FORMAT(ts, 'HH:mm:ss.SSS')", "STRING 10:30:45.123"},
		{"DATE_FORMAT(lts, 'yyyy-MM-dd''T''HH:mm:ssX')", "STRING 2024-01-02T10:30:45Z"},
		{"DATE_FORMAT(day, 'dd/MM/yy')", "STRING 02/01/24"},
		{"DATE_FORMAT('2024-01-02 10:30:45', 'yyyy/MM/dd')", "STRING 2024/01/02"},
		{"DATE_FORMAT('garbage', 'yyyy')", "STRING null"},
		{"DATE_FORMAT(x_ts, 'yyyy')", "STRING null"},
		{"DATE_FORMAT(n, 'yyyy')", "error: DATE_FORMAT argument 1 must be a TIMESTAMP, DATE or STRING, not INT"},
		{"TO_TIMESTAMP('2024-01-02 10:30:45')", "TIMESTAMP(3) 2024-01-02T10:30:45"},
		{"TO_TIMESTAMP('2024-01-02 10:30:45.5')", "TIMESTAMP(3) 2024-01-02T10:30:45.500"},
		{"TO_TIMESTAMP('02/01/2024 10', 'dd/MM/yyyy HH')", "TIMESTAMP(3) 2024-01-02T10:00"},
		{"TO_TIMESTAMP('20240102103045', 'yyyyMMddHHmmss')", "TIMESTAMP(3) 2024-01-02T10:30:45"},
		{"TO_TIMESTAMP('2024-01-02 10:30:45.123+0200', 'yyyy-MM-dd HH:mm:ss.SSSZ')", "TIMESTAMP(3) 2024-01-02T08:30:45.123"},
		{"TO_TIMESTAMP('2024-02-30 00:00:00')", "TIMESTAMP(3) null"},
		{"TO_TIMESTAMP('garbage')", "TIMESTAMP(3) null"},
		{"TO_TIMESTAMP('2024-01-02', 'yyyy-MM-dd x')", "TIMESTAMP(3) null"},
		{"TO_TIMESTAMP(x_s)", "TIMESTAMP(3) null"},
		// A year past 0000..9999 is NULL, as Flink's (fn-range-parse-past).
		{"TO_TIMESTAMP('10000-01-01 00:00:00')", "TIMESTAMP(3) null"},
		{"TO_TIMESTAMP('-0001-01-01 00:00:00')", "TIMESTAMP(3) null"},
		{"TO_TIMESTAMP('9999-12-31 23:59:59.999')", "TIMESTAMP(3) 9999-12-31T23:59:59.999"},
		{"TO_TIMESTAMP('0000-01-01 00:00:00')", "TIMESTAMP(3) 0000-01-01T00:00"},
		{"TO_TIMESTAMP('10000/01/01', 'yyyy/MM/dd')", "TIMESTAMP(3) null"},
		{"TO_DATE('10000-01-01')", "DATE null"},
		{"TO_DATE('10000-01-01', 'yyyy-MM-dd')", "DATE null"},
		{"TO_DATE('-0001-12-31', 'yyyy-MM-dd')", "DATE null"},
		{"DATE_FORMAT(TIMESTAMP '9999-12-31 12:00:00' + INTERVAL '1' DAY, 'yyyy-MM-dd')", "STRING NOT NULL +10000-01-01"},
		{"TO_DATE('2024-01-02')", "DATE 2024-01-02"},
		{"TO_DATE('02.01.2024', 'dd.MM.yyyy')", "DATE 2024-01-02"},
		{"TO_DATE('nope')", "DATE null"},
		{"TO_TIMESTAMP_LTZ(1704191445123, 3)", "TIMESTAMP_LTZ(3) NOT NULL 2024-01-02T10:30:45.123Z"},
		{"TO_TIMESTAMP_LTZ(1704191445123)", "TIMESTAMP_LTZ(3) NOT NULL 2024-01-02T10:30:45.123Z"},
		{"TO_TIMESTAMP_LTZ(1704191445, 0)", "TIMESTAMP_LTZ(3) NOT NULL 2024-01-02T10:30:45Z"},
		{"TO_TIMESTAMP_LTZ(b, 3)", "TIMESTAMP_LTZ(3) 1970-04-26T17:46:40Z"},
		{"TO_TIMESTAMP_LTZ(1704191445.5e0, 0)", "TIMESTAMP_LTZ(3) NOT NULL 2024-01-02T10:30:45.500Z"},
		{"TO_TIMESTAMP_LTZ(x_i, 3)", "TIMESTAMP_LTZ(3) null"},
		// Past the years 0000 to 9999 the instant is NULL, as Flink's
		// DateTimeUtils.toTimestampData (MIN_EPOCH_MILLS to
		// MAX_EPOCH_MILLS), and the type nullable; a constant that
		// fits stays NOT NULL. Both ends, just inside and just past.
		{"TO_TIMESTAMP_LTZ(9223372036854775807, 0)", "TIMESTAMP_LTZ(3) null"},
		{"TO_TIMESTAMP_LTZ(-9223372036854775808, 3)", "TIMESTAMP_LTZ(3) null"},
		{"TO_TIMESTAMP_LTZ(253402300799999, 3)", "TIMESTAMP_LTZ(3) NOT NULL 9999-12-31T23:59:59.999Z"},
		{"TO_TIMESTAMP_LTZ(253402300799998, 3)", "TIMESTAMP_LTZ(3) NOT NULL 9999-12-31T23:59:59.998Z"},
		{"TO_TIMESTAMP_LTZ(253402300800000, 3)", "TIMESTAMP_LTZ(3) null"},
		{"TO_TIMESTAMP_LTZ(-62167219200000, 3)", "TIMESTAMP_LTZ(3) NOT NULL 0000-01-01T00:00:00Z"},
		{"TO_TIMESTAMP_LTZ(-62167219199999, 3)", "TIMESTAMP_LTZ(3) NOT NULL 0000-01-01T00:00:00.001Z"},
		{"TO_TIMESTAMP_LTZ(-62167219200001, 3)", "TIMESTAMP_LTZ(3) null"},
		{"TO_TIMESTAMP_LTZ(253402300799, 0)", "TIMESTAMP_LTZ(3) NOT NULL 9999-12-31T23:59:59Z"},
		{"TO_TIMESTAMP_LTZ(253402300800, 0)", "TIMESTAMP_LTZ(3) null"},
		{"TO_TIMESTAMP_LTZ(-62167219200, 0)", "TIMESTAMP_LTZ(3) NOT NULL 0000-01-01T00:00:00Z"},
		{"TO_TIMESTAMP_LTZ(-62167219201, 0)", "TIMESTAMP_LTZ(3) null"},
		{"TO_TIMESTAMP_LTZ(253402300799999999, 6)", "TIMESTAMP_LTZ(3) NOT NULL 9999-12-31T23:59:59.999Z"},
		{"TO_TIMESTAMP_LTZ(253402300800000000, 6)", "TIMESTAMP_LTZ(3) null"},
		{"TO_TIMESTAMP_LTZ(-9223372036854775807, 9)", "TIMESTAMP_LTZ(3) NOT NULL 1677-09-21T00:12:43.145Z"},
		{"TO_TIMESTAMP_LTZ(253402300799.999e0, 0)", "TIMESTAMP_LTZ(3) NOT NULL 9999-12-31T23:59:59.999Z"},
		{"TO_TIMESTAMP_LTZ(253402300800e0, 0)", "TIMESTAMP_LTZ(3) null"},
		{"TO_TIMESTAMP_LTZ(-62167219200000.5e0, 3)", "TIMESTAMP_LTZ(3) NOT NULL 0000-01-01T00:00:00Z"},
		{"TO_TIMESTAMP_LTZ(-62167219200001e0, 3)", "TIMESTAMP_LTZ(3) null"},
		{"TO_TIMESTAMP_LTZ(1e300, 3)", "TIMESTAMP_LTZ(3) null"},
		{"TO_TIMESTAMP_LTZ(CAST('NaN' AS DOUBLE), 3)", "TIMESTAMP_LTZ(3) null"},
		{"TO_TIMESTAMP_LTZ(CAST('Infinity' AS DOUBLE), 0)", "TIMESTAMP_LTZ(3) null"},
		{"TO_TIMESTAMP_LTZ(253402300799999.00, 3)", "TIMESTAMP_LTZ(3) NOT NULL 9999-12-31T23:59:59.999Z"},
		{"TO_TIMESTAMP_LTZ(253402300800000.00, 3)", "TIMESTAMP_LTZ(3) null"},
		// Flink takes the epoch's milliseconds toward zero ((long) v).
		{"TO_TIMESTAMP_LTZ(-1.5e0, 3)", "TIMESTAMP_LTZ(3) NOT NULL 1969-12-31T23:59:59.999Z"},
		{"TO_TIMESTAMP_LTZ(-1.0005e0, 0)", "TIMESTAMP_LTZ(3) NOT NULL 1969-12-31T23:59:59Z"},
		{"TO_TIMESTAMP_LTZ('2024-01-02 10:30:45', 'yyyy-MM-dd HH:mm:ss')", "TIMESTAMP_LTZ(3) 2024-01-02T10:30:45Z"},
		{"UNIX_TIMESTAMP('2024-01-02 10:30:45')", "BIGINT NOT NULL 1704191445"},
		{"UNIX_TIMESTAMP('02/01/2024', 'dd/MM/yyyy')", "BIGINT NOT NULL 1704153600"},
		{"UNIX_TIMESTAMP('bad')", "BIGINT NOT NULL -9223372036854775808"},
		{"UNIX_TIMESTAMP()", "BIGINT NOT NULL 1714979289"},
		{"FROM_UNIXTIME(1704191445)", "STRING NOT NULL 2024-01-02 10:30:45"},
		{"FROM_UNIXTIME(0, 'yyyy')", "STRING NOT NULL 1970"},
		{"CURRENT_TIMESTAMP", "TIMESTAMP_LTZ(3) NOT NULL 2024-05-06T07:08:09.123Z"},
		{"NOW()", "TIMESTAMP_LTZ(3) NOT NULL 2024-05-06T07:08:09.123Z"},
		{"LOCALTIMESTAMP", "TIMESTAMP(3) NOT NULL 2024-05-06T07:08:09.123"},
		{"CURRENT_DATE", "DATE NOT NULL 2024-05-06"},
		{"EXTRACT(YEAR FROM ts)", "BIGINT 2024"},
		{"EXTRACT(QUARTER FROM ts)", "BIGINT 1"},
		{"EXTRACT(MONTH FROM day)", "BIGINT 1"},
		{"EXTRACT(WEEK FROM ts)", "BIGINT 1"},
		{"EXTRACT(DAY FROM ts)", "BIGINT 2"},
		{"EXTRACT(HOUR FROM ts)", "BIGINT 10"},
		{"EXTRACT(MINUTE FROM lts)", "BIGINT 30"},
		{"EXTRACT(SECOND FROM ts)", "BIGINT 45"},
		{"EXTRACT(MILLISECOND FROM ts)", "BIGINT 123"},
		{"EXTRACT(MICROSECOND FROM ts)", "BIGINT 123000"},
		{"EXTRACT(NANOSECOND FROM ts)", "BIGINT 123000000"},
		{"EXTRACT(DOW FROM ts)", "BIGINT 3"},
		{"EXTRACT(ISODOW FROM ts)", "BIGINT 2"},
		{"EXTRACT(DOY FROM ts)", "BIGINT 2"},
		{"EXTRACT(EPOCH FROM ts)", "BIGINT 1704191445"},
		{"EXTRACT(DECADE FROM ts)", "BIGINT 202"},
		{"EXTRACT(CENTURY FROM ts)", "BIGINT 21"},
		{"EXTRACT(MILLENNIUM FROM day)", "BIGINT 3"},
		{"EXTRACT(YEAR FROM x_ts)", "BIGINT null"},
		{"EXTRACT(YEAR FROM n)", "error: cannot take the YEAR of INT"},
		{"YEAR(day)", "BIGINT 2024"},
		{"HOUR(lts)", "BIGINT 10"},
		{"DAYOFWEEK(ts)", "BIGINT 3"},
		{"DAYOFMONTH(ts)", "BIGINT 2"},
		{"DAYOFYEAR(ts)", "BIGINT 2"},
		{"MINUTE(ts) + SECOND(ts)", "BIGINT 75"},
	})
}
