package expr

import "testing"

// TestJSONFunctions: the SQL/JSON functions with their clauses, as
// Flink's documentation gives them (strict mode unless the path says lax).
func TestJSONFunctions(t *testing.T) {
	runEvalCases(t, []evalCase{
		// JSON_VALUE
		{`JSON_VALUE('{"a": true}', '$.a')`, "STRING true"},
		{`JSON_VALUE('{"a": true}', '$.a' RETURNING BOOLEAN)`, "BOOLEAN true"},
		{`JSON_VALUE('{"a": true}', 'lax $.b' DEFAULT FALSE ON EMPTY)`, "STRING false"},
		{`JSON_VALUE('{"a": true}', 'strict $.b' DEFAULT FALSE ON ERROR)`, "STRING false"},
		{`JSON_VALUE('{"a": true}', 'strict $.b' DEFAULT 'e' ON EMPTY DEFAULT 'x' ON ERROR)`, "STRING x"},
		{`JSON_VALUE('{"contains blank": "right"}', 'strict $.[''contains blank'']' NULL ON EMPTY DEFAULT 'wrong' ON ERROR)`, "STRING right"},
		{`JSON_VALUE('{"a b": "true"}', '$.[''a b'']')`, "STRING true"},
		{`JSON_VALUE('{}', 'lax $.a' RETURNING INT DEFAULT 'x' ON EMPTY DEFAULT 9 ON ERROR)`, "INT 9"},
		{`JSON_VALUE('{}', 'lax $.a' RETURNING INT DEFAULT 'x' ON EMPTY)`, "INT null"},
		{`JSON_VALUE('{"a": true}', 'lax $.b' DEFAULT 'e' ON EMPTY DEFAULT 'x' ON ERROR)`, "STRING e"},
		{`JSON_VALUE('{"a": true}', '$.b' DEFAULT 'e' ON EMPTY)`, "STRING null"},
		{`JSON_VALUE('{"a.b": [0.998,0.996]}', '$.["a.b"][0]' RETURNING DOUBLE)`, "DOUBLE 0.998"},
		{`JSON_VALUE('{"a": "12"}', '$.a' RETURNING INT)`, "INT 12"},
		{`JSON_VALUE('{"a": 7}', '$.a' RETURNING BIGINT) + 1`, "BIGINT 8"},
		{`JSON_VALUE('{"a": 1.25}', '$.a' RETURNING DECIMAL(5, 2))`, "DECIMAL(5, 2) 1.25"},
		{`JSON_VALUE('{"a": "2024-01-02"}', '$.a' RETURNING DATE)`, "DATE 2024-01-02"},
		{`JSON_VALUE('{"a": "x"}', '$.a' RETURNING INT)`, "INT null"},
		{`JSON_VALUE('{"a": "x"}', '$.a' RETURNING INT DEFAULT -1 ON ERROR)`, "INT -1"},
		{`JSON_VALUE('{"a": "true"}', '$.a' RETURNING BOOLEAN)`, "BOOLEAN null"},
		{`JSON_VALUE('{"a": [1]}', '$.a')`, "STRING null"},
		{`JSON_VALUE('{"a": [1]}', '$.a' DEFAULT 'arr' ON ERROR)`, "STRING arr"},
		{`JSON_VALUE('{"a": null}', 'lax $.a' DEFAULT 'n' ON EMPTY)`, "STRING n"},
		{`JSON_VALUE('not json', '$.a' DEFAULT 'bad' ON ERROR)`, "STRING bad"},
		// Calcite reads text that is not JSON as empty in lax mode.
		{`JSON_VALUE('not json', 'lax $.a' DEFAULT 'none' ON EMPTY DEFAULT 'bad' ON ERROR)`, "STRING none"},
		{`JSON_QUERY('not json', 'lax $.x' EMPTY ARRAY ON EMPTY)`, "STRING []"},
		{`JSON_VALUE('{"a": 1}', 'lax $.b' ERROR ON EMPTY)`, "error: no value at the JSON path"},
		{`JSON_VALUE(js, 'lax $.zz' DEFAULT id ON EMPTY)`, "STRING sensor-1"},
		{`JSON_VALUE(x_s, '$.a' DEFAULT 'd' ON EMPTY)`, "STRING null"},
		{`JSON_VALUE(js, 1)`, "error: JSON_VALUE argument 2 must be a STRING, not INT"},
		{`JSON_VALUE(n, '$')`, "error: JSON_VALUE argument 1 must be a STRING, not INT"},
		{`JSON_VALUE(js, '$.a' RETURNING BYTES)`, "error: JSON_VALUE cannot return BYTES"},
		// JSON_QUERY
		{`JSON_QUERY('{"a": {"b": 1}}', '$.a')`, `STRING {"b":1}`},
		{`JSON_QUERY('[1, 2]', '$')`, "STRING [1,2]"},
		{`JSON_QUERY('[1, 2]', '$' WITH ARRAY WRAPPER)`, "STRING [[1,2]]"},
		{`JSON_QUERY('[1, 2]', '$' WITH CONDITIONAL ARRAY WRAPPER)`, "STRING [1,2]"},
		{`JSON_QUERY('{}', '$' WITH CONDITIONAL ARRAY WRAPPER)`, "STRING [{}]"},
		{`JSON_QUERY('[1, 2]', '$' WITH UNCONDITIONAL ARRAY WRAPPER)`, "STRING [[1,2]]"},
		{`JSON_QUERY('{"a": "x"}', '$.a' WITH CONDITIONAL ARRAY WRAPPER)`, `STRING ["x"]`},
		{`JSON_QUERY('{"a": "x"}', '$.a')`, "STRING null"},
		{`JSON_QUERY('{"a": "x"}', '$.a' WITHOUT ARRAY WRAPPER EMPTY ARRAY ON ERROR)`, "STRING []"},
		{`JSON_QUERY('{}', 'lax $.invalid' EMPTY OBJECT ON EMPTY)`, "STRING {}"},
		{`JSON_QUERY('{}', 'strict $.invalid' EMPTY ARRAY ON ERROR)`, "STRING []"},
		{`JSON_QUERY('{}', 'strict $.invalid' ERROR ON ERROR)`, "error: the strict path leads nowhere"},
		{`JSON_QUERY(x_s, '$')`, "STRING null"},
		// JSON_EXISTS
		{`JSON_EXISTS('{"a": true}', '$.a')`, "BOOLEAN NOT NULL true"},
		{`JSON_EXISTS('{"a": true}', '$.b')`, "BOOLEAN NOT NULL false"},
		{`JSON_EXISTS('{"a": [{"b": 1}]}', '$.a[0].b')`, "BOOLEAN NOT NULL true"},
		{`JSON_EXISTS('{"a": true}', 'strict $.b' TRUE ON ERROR)`, "BOOLEAN NOT NULL true"},
		{`JSON_EXISTS('{"a": true}', 'lax $.b' TRUE ON ERROR)`, "BOOLEAN NOT NULL false"},
		{`JSON_EXISTS('{"a": null}', '$.a')`, "BOOLEAN NOT NULL false"},
		{`JSON_EXISTS('oops', '$.a' UNKNOWN ON ERROR)`, "BOOLEAN null"},
		{`JSON_EXISTS('oops', '$.a' ERROR ON ERROR)`, "error: the text is not JSON"},
		{`JSON_EXISTS(x_s, '$.a')`, "BOOLEAN null"},
		// JSON_OBJECT
		{`JSON_OBJECT()`, "STRING NOT NULL {}"},
		{`JSON_OBJECT('K1' VALUE 'V1', 'K2' VALUE 'V2')`, `STRING NOT NULL {"K1":"V1","K2":"V2"}`},
		{`JSON_OBJECT(KEY 'K1' VALUE CAST(NULL AS STRING) NULL ON NULL)`, `STRING NOT NULL {"K1":null}`},
		{`JSON_ARRAY(1, '2')`, `STRING NOT NULL [1,"2"]`},
		// Invalid UTF-8 becomes U+FFFD as Flink's Jackson gets it: one
		// per malformed sequence as Java decodes the bytes.
		{`JSON_OBJECT('k' VALUE FROM_BASE64('YeKCYg=='))`, "STRING NOT NULL {\"k\":\"a\uFFFDb\"}"},
		{`JSON_ARRAY(FROM_BASE64('7aCA'))`, "STRING NOT NULL [\"\uFFFD\"]"},
		{`JSON_QUERY(FROM_BASE64('eyJhIjpbIv8iXX0='), '$.a')`, "STRING [\"\uFFFD\"]"}, // {"a":["\xff"]}
		{`JSON_ARRAY(CAST(NULL AS STRING) NULL ON NULL)`, `STRING NOT NULL [null]`},
		{`JSON_OBJECT(KEY 'K1' VALUE 'V1', KEY 'K2' VALUE 'V2')`, `STRING NOT NULL {"K1":"V1","K2":"V2"}`},
		{`JSON_OBJECT(KEY 'K1' VALUE 1, KEY 'K2' VALUE 1.50, KEY 'K3' VALUE TRUE, KEY 'K4' VALUE temp)`, `STRING NOT NULL {"K1":1,"K2":1.50,"K3":true,"K4":31.5}`},
		{`JSON_OBJECT(KEY 'K1' VALUE NULL)`, `STRING NOT NULL {"K1":null}`},
		{`JSON_OBJECT(KEY 'K1' VALUE x_s ABSENT ON NULL)`, "STRING NOT NULL {}"},
		{`JSON_OBJECT(KEY 'K1' VALUE JSON_OBJECT(KEY 'K2' VALUE 'V'))`, `STRING NOT NULL {"K1":{"K2":"V"}}`},
		{`JSON_OBJECT(KEY 'K1' VALUE JSON_ARRAY(1, 2))`, `STRING NOT NULL {"K1":[1,2]}`},
		{`JSON_OBJECT(KEY 'K1' VALUE 'a"b\')`, `STRING NOT NULL {"K1":"a\"b\\"}`},
		{`JSON_OBJECT(KEY 'a' VALUE 1, KEY 'b' VALUE 2, KEY 'a' VALUE 3)`, `STRING NOT NULL {"a":3,"b":2}`},
		{`JSON_OBJECT(KEY 'ts' VALUE ts, KEY 'd' VALUE day, KEY 'bin' VALUE bin)`, `STRING NOT NULL {"bin":"aGk=","d":"2024-01-02","ts":"2024-01-02T10:30:45.123"}`},
		// Flink writes object members sorted by name (values from Flink 2.3).
		{`JSON_OBJECT(KEY 'b' VALUE 1, KEY 'a' VALUE 2)`, `STRING NOT NULL {"a":2,"b":1}`},
		{`JSON_QUERY('{"b":1,"a":{"d":1,"c":2}}', '$')`, `STRING {"a":{"c":2,"d":1},"b":1}`},
		{`JSON_OBJECT(KEY 'z' VALUE JSON_OBJECT(KEY 'y' VALUE 1, KEY 'x' VALUE 2))`, `STRING NOT NULL {"z":{"x":2,"y":1}}`},
		{`JSON_ARRAY(MAP['b', 1, 'a', 2])`, `STRING NOT NULL [{"a":2,"b":1}]`},
		{`JSON_QUERY('{"a":{"z":1,"é":2,"Z":3}}', '$.a')`, `STRING {"Z":3,"z":1,"é":2}`},
		{`JSON_OBJECT(KEY id VALUE 1)`, "error: JSON_OBJECT keys must be non-NULL string constants"},
		// JSON_ARRAY
		{`JSON_ARRAY()`, "STRING NOT NULL []"},
		{`JSON_ARRAY(1, 'a', FALSE)`, `STRING NOT NULL [1,"a",false]`},
		{`JSON_ARRAY(1, x_s, 2)`, "STRING NOT NULL [1,2]"},
		{`JSON_ARRAY(1, x_s NULL ON NULL)`, "STRING NOT NULL [1,null]"},
		{`JSON_ARRAY(JSON_ARRAY(1), JSON_OBJECT())`, "STRING NOT NULL [[1],{}]"},
		{`JSON_ARRAY(ABSENT ON NULL)`, "STRING NOT NULL []"},
	})
}

// TestJSONNumberText: JSON_VALUE gives a number as Flink 2.3 does, the
// text of the BigDecimal its Jackson reads (outputs taken from Flink's
// SqlJsonUtils.jsonValue).
func TestJSONNumberText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"123456789.98765433", "123456789.98765433"},
		{"1.5e3", "1.5E+3"},
		{"1.5", "1.5"},
		{"-2.0", "-2.0"},
		{"0.0000001", "1E-7"},
		{"100.10", "100.10"},
		{"1E2", "1E+2"},
		{"12345678901234567890", "12345678901234567890"},
		{"-0.0", "0.0"},
		{"1e400", "1E+400"},
		{"0.000001", "0.000001"},
		{"7", "7"},
		{"-0", "0"},
		{"0.0000000", "0E-7"},
		{"-1.25e-2", "-0.0125"},
	} {
		if got := javaNumberText(tc.in); got != tc.want {
			t.Errorf("javaNumberText(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
