package spec

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// textPos is the 1-based line and column (in characters) of the byte at
// off in text.
func textPos(text string, off int) (line, col int) {
	start := strings.LastIndexByte(text[:off], '\n') + 1
	return strings.Count(text[:off], "\n") + 1, utf8.RuneCountInString(text[start:off]) + 1
}

// filePos is the position of the only "nope" in the file.
func filePos(src string) (line, col int) {
	for i, l := range strings.Split(src, "\n") {
		if j := strings.Index(l, "nope"); j >= 0 {
			return i + 1, utf8.RuneCountInString(l[:j]) + 1
		}
	}
	return 0, 0
}

// A position inside a piece of SQL maps to the same character in the
// file, whatever YAML style holds the SQL: the folding of > and of plain
// and quoted scalars, escapes and indentation are undone.
func TestSQLFilePos(t *testing.T) {
	head := "version: 1\nname: p\nsources:\n  - name: g\n    type: datagen\n    schema:\n      - id BIGINT\n"
	sink := "sinks: [{name: o, from: g, type: print}]\n"
	tr := func(sql string) string { return head + "transforms:\n  - name: a\n    sql: " + sql + "\n" + sink }
	for name, tc := range map[string]struct {
		src string
		get func(*Pipeline) *SQL
	}{
		"literal":                          {src: tr("|\n      SELECT id,\n        nope FROM g")},
		"literal strip":                    {src: tr("|-\n      SELECT id,\n      nope FROM g")},
		"literal keep":                     {src: tr("|+\n      SELECT id,\n\n      nope FROM g\n")},
		"literal first line":               {src: tr("|\n      SELECT nope FROM g")},
		"folded":                           {src: tr(">\n      SELECT id,\n      nope FROM g")},
		"folded strip":                     {src: tr(">-\n      SELECT id, a,\n      b, nope\n      FROM g")},
		"folded more indented":             {src: tr(">\n      SELECT id,\n        nope FROM g")},
		"folded blank line":                {src: tr(">\n      SELECT id,\n\n      nope FROM g")},
		"folded trailing spaces":           {src: tr(">\n      SELECT id,   \n      nope FROM g")},
		"folded comment after":             {src: tr(">\n      SELECT id,\n      nope FROM g\n    # a comment")},
		"plain":                            {src: tr("SELECT id, nope FROM g")},
		"plain multi-line":                 {src: tr("SELECT id,\n      x,\n        nope FROM g")},
		"double-quoted":                    {src: tr(`"SELECT \"id\", 'a\tb', nope FROM g"`)},
		"double-quoted unicode":            {src: tr(`"SELECT 'é\u00e9\x41', nope FROM g"`)},
		"double-quoted folded":             {src: tr("\"SELECT id,\n      nope FROM g\"")},
		"double-quoted escaped line break": {src: tr("\"SELECT id, \\\n      nope FROM g\"")},
		"single-quoted":                    {src: tr("'SELECT ''a'', nope FROM g'")},
		"single-quoted folded":             {src: tr("'SELECT ''a'',\n      nope FROM g'")},
		"unicode literal":                  {src: tr("|\n      SELECT 'ééé', nope FROM g")},
		"crlf":                             {src: strings.ReplaceAll(tr(">\n      SELECT id,\n      nope FROM g"), "\n", "\r\n")},
		"tab in text":                      {src: tr("|\n      SELECT\tid,\tnope FROM g")},
		"watermark": {
			src: head + "      - ts TIMESTAMP(3)\n    watermark: >-\n      ts -\n      nope\n" + sink,
			get: func(p *Pipeline) *SQL { return p.Sources[0].Watermark },
		},
		"computed block": {
			src: head + "      - c AS UPPER(  nope)\n" + sink,
			get: func(p *Pipeline) *SQL { return p.Sources[0].Schema[1].Computed },
		},
		"computed quoted": {
			src: head + "      - \"c  AS \\\"x\\\" || nope\"\n" + sink,
			get: func(p *Pipeline) *SQL { return p.Sources[0].Schema[1].Computed },
		},
		"computed flow": {
			src: "version: 1\nname: p\nsources: [{name: g, type: datagen, schema: [id BIGINT, c AS nope + 1]}]\n" + sink,
			get: func(p *Pipeline) *SQL { return p.Sources[0].Schema[1].Computed },
		},
		"computed flow single-quoted": {
			src: "version: 1\nname: p\nsources: [{name: g, type: datagen, schema: [id BIGINT, 'c AS ''x'' || nope']}]\n" + sink,
			get: func(p *Pipeline) *SQL { return p.Sources[0].Schema[1].Computed },
		},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := Parse("p.yaml", []byte(tc.src), env(nil))
			if err != nil {
				t.Fatal(err)
			}
			get := tc.get
			if get == nil {
				get = func(p *Pipeline) *SQL { return p.Transforms[0].SQL }
			}
			s := get(p)
			off := strings.Index(s.Text, "nope")
			if off < 0 {
				t.Fatalf("no nope in %q", s.Text)
			}
			line, col := textPos(s.Text, off)
			wantLine, wantCol := filePos(tc.src)
			if got := s.FilePos(line, col); got.Line != wantLine || got.Col != wantCol {
				t.Errorf("text %d:%d of %q maps to %d:%d, want %d:%d", line, col, s.Text, got.Line, got.Col, wantLine, wantCol)
			}
		})
	}
}
