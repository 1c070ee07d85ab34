package expr

import "testing"

// TestURLAndSearchFunctions: PARSE_URL as java.net.URL splits a URL,
// UNHEX, INSTR and the REGEXP_ searches, NULL for a NULL argument.
func TestURLAndSearchFunctions(t *testing.T) {
	const u = "'http://user:pw@example.com:8080/a/b.html?k1=v1&k2=v2#frag'"
	runEvalCases(t, []evalCase{
		{"PARSE_URL(" + u + ", 'HOST')", "STRING example.com"},
		{"PARSE_URL(" + u + ", 'PATH')", "STRING /a/b.html"},
		{"PARSE_URL(" + u + ", 'QUERY')", "STRING k1=v1&k2=v2"},
		{"PARSE_URL(" + u + ", 'REF')", "STRING frag"},
		{"PARSE_URL(" + u + ", 'PROTOCOL')", "STRING http"},
		{"PARSE_URL(" + u + ", 'FILE')", "STRING /a/b.html?k1=v1&k2=v2"},
		{"PARSE_URL(" + u + ", 'AUTHORITY')", "STRING user:pw@example.com:8080"},
		{"PARSE_URL(" + u + ", 'USERINFO')", "STRING user:pw"},
		{"PARSE_URL(" + u + ", 'QUERY', 'k2')", "STRING v2"},
		{"PARSE_URL(" + u + ", 'QUERY', 'k3')", "STRING null"},
		{"PARSE_URL(" + u + ", 'PATH', 'k1')", "STRING null"},
		{"PARSE_URL('http://example.com', 'QUERY')", "STRING null"},
		{"PARSE_URL('http://example.com', 'PATH')", "STRING "},
		{"PARSE_URL('not a url', 'HOST')", "STRING null"},
		{"PARSE_URL(x_s, 'HOST')", "STRING null"},
		{"UNHEX('414243')", "BYTES [65, 66, 67]"},
		{"UNHEX('F')", "BYTES [0]"},
		{"UNHEX('ABC')", "BYTES [0, -68]"},
		{"UNHEX('zAB')", "BYTES null"},
		{"UNHEX('zz')", "BYTES null"},
		{"INSTR('hello', 'l')", "INT NOT NULL 3"},
		{"INSTR('hello', 'z')", "INT NOT NULL 0"},
		{"INSTR('日本語', '語')", "INT NOT NULL 3"},
		{"INSTR(x_s, 'a')", "INT null"},
		{"REGEXP_COUNT('a1b22c333', '[0-9]+')", "INT NOT NULL 3"},
		{"REGEXP_COUNT('ab x', 'x*')", "INT NOT NULL 5"},
		{"REGEXP_COUNT('xx', 'x*')", "INT NOT NULL 2"},
		{"REGEXP_INSTR('ab12', '[0-9]')", "INT NOT NULL 3"},
		{"REGEXP_INSTR('ab', '[0-9]')", "INT NOT NULL 0"},
		{"REGEXP_SUBSTR('ab12c3', '[0-9]+')", "STRING 12"},
		{"REGEXP_SUBSTR('abc', '[0-9]+')", "STRING null"},
		{"REGEXP_COUNT('abc', '(')", "error: invalid regular expression"},
	})
}
