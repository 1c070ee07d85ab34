package elasticsearch

import (
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

func TestIndexNames(t *testing.T) {
	ts := time.Date(2024, 3, 9, 14, 5, 7, 0, time.UTC)
	r := row.Row{row.BigIntValue(7), row.StringValue("Eu"), row.TimestampValue(ts.UnixMicro()), row.DateValue(19000), row.BoolValue(true)}
	now := func() time.Time { return time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC) }
	tests := []struct{ pattern, want string }{
		{"logs", "logs"},
		{"logs-{ts|yyyy-MM-dd}", "logs-2024-03-09"},
		{"logs-{ts|yyyy.MM}-x", "logs-2024.03-x"},
		{"d-{day|yyyyMMdd}", "d-20220108"},
		{"by-{id}", "by-7"},
		{"{name}", "Eu"},
		{"b-{ok}", "b-true"},
		{"n-{now()|yyyy}", "n-2030"},
	}
	for _, tt := range tests {
		p, err := parseIndex(tt.pattern)
		if err != nil {
			t.Fatalf("%s: %v", tt.pattern, err)
		}
		if err := p.bind(testSchema); err != nil {
			t.Fatalf("%s: %v", tt.pattern, err)
		}
		for range 2 { // the second time from the cache
			got, err := p.name(r, now)
			if err != nil || got != tt.want {
				t.Errorf("%s: %q, %v; want %q", tt.pattern, got, err, tt.want)
			}
		}
	}
	for _, bad := range []string{"x-{nope}", "x-{name|yyyy}"} {
		p, err := parseIndex(bad)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.bind(testSchema); err == nil {
			t.Errorf("%s bound to %s", bad, testSchema)
		}
	}
	p, _ := parseIndex("x-{ts|yyyy}")
	_ = p.bind(testSchema)
	if _, err := p.name(row.Row{row.NullValue, row.NullValue, row.NullValue, row.NullValue, row.NullValue}, now); err == nil {
		t.Error("a NULL index column gave a name")
	}
}

func FuzzIndexPattern(f *testing.F) {
	for _, s := range []string{"logs", "logs-{ts|yyyy-MM-dd}", "{id}", "a-{now()|yyyy}", "{", "}{", "x-{ts|'q}", "{|}"} {
		f.Add(s)
	}
	r := row.Row{row.BigIntValue(1), row.StringValue("x"), row.TimestampValue(0), row.DateValue(0), row.BoolValue(false)}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parseIndex(s)
		if err != nil {
			return
		}
		if p.bind(testSchema) != nil {
			return
		}
		name, err := p.name(r, time.Now)
		if err == nil && !strings.HasPrefix(name, p.prefix) {
			t.Fatalf("%q gave %q", s, name)
		}
	})
}

func TestDocumentIDs(t *testing.T) {
	ts := time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC).UnixMicro()
	tests := []struct {
		name      string
		key       []int
		r         row.Row
		delim     *string
		nullValue *string
		want      string
	}{
		{"one column", []int{0}, row.Row{row.BigIntValue(42)}, nil, nil, "42"},
		{"joined", []int{0, 1}, row.Row{row.BigIntValue(1), row.StringValue("a")}, nil, nil, "1_a"},
		{"delimiter", []int{1, 0}, row.Row{row.BigIntValue(1), row.StringValue("a")}, ptr("|"), nil, "a|1"},
		{"null", []int{0, 1}, row.Row{row.NullValue, row.StringValue("a")}, nil, nil, "null_a"},
		{"null literal", []int{0}, row.Row{row.NullValue}, nil, ptr("N/A"), "N/A"},
		// Java's toString forms, as Flink's KeyExtractor writes them.
		{"timestamp", []int{0}, row.Row{row.TimestampValue(ts)}, nil, nil, "2024-01-01T10:00"},
		{"timestamp ltz", []int{0}, row.Row{row.TimestampLTZValue(ts + 5e5)}, nil, nil, "2024-01-01T10:00:00.500"},
		{"boolean", []int{0}, row.Row{row.BoolValue(true)}, nil, nil, "true"},
		{"decimal", []int{0}, row.Row{row.DecimalValue(-150, 2)}, nil, nil, "-1.50"},
		// DecimalData.toString is toPlainString: no exponent in an id.
		{"small decimal", []int{0}, row.Row{row.DecimalValue(0, 7)}, nil, nil, "0.0000000"},
		{"decimal(38)", []int{0}, row.Row{row.Decimal128Value(row.Int128{Hi: -1 << 40, Lo: 7}, 30)}, nil, nil, "-20.282409603651670423947251286009"},
		{"double", []int{0}, row.Row{row.DoubleValue(1e7)}, nil, nil, "1.0E7"},
		{"date", []int{0}, row.Row{row.DateValue(0)}, nil, nil, "1970-01-01"},
	}
	for _, tt := range tests {
		cfg := Config{Hosts: []string{"http://x:1"}, Index: "i", KeyDelimiter: tt.delim, KeyNullLiteral: tt.nullValue}
		s, err := New(cfg, connector.SinkEnv{Name: "es", Formats: connector.NewRegistry()})
		if err != nil {
			t.Fatal(err)
		}
		s.key = tt.key
		if got := string(s.docID(tt.r)); got != tt.want {
			t.Errorf("%s: id %q, want %q", tt.name, got, tt.want)
		}
	}
}
