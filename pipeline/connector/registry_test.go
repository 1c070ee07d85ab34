package connector

import (
	"strings"
	"testing"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

const secret = "Tr0ub4dor/\"&3\\:@%"

type dsnConfig struct {
	DSN    string     `yaml:"dsn"`
	Rows   int        `yaml:"rows"`
	Format FormatSpec `yaml:"format"`
}

// testRegistry has a source whose constructor complains as a driver does:
// with the part of the DSN before the first '/' quoted.
func testRegistry() *Registry {
	r := NewRegistry()
	RegisterSource(r, "db", "test", func(c dsnConfig, env SourceEnv) (Source, error) {
		if c.Format.Type != "" {
			if _, err := env.Formats.NewDecoder(c.Format, row.Schema{}); err != nil {
				return nil, err
			}
		}
		before, _, _ := strings.Cut(c.DSN, "/")
		return nil, Errorf("dsn", "default addr for network '%s' unknown", before)
	})
	type csvConfig struct {
		Header bool `yaml:"header"`
	}
	RegisterFormat(r, "csv", "test", func(csvConfig, row.Schema) (Decoder, error) { return nil, nil }, nil)
	return r
}

func TestConnectorErrorsNeverShowAVariable(t *testing.T) {
	lookup := func(k string) (string, bool) {
		v, ok := map[string]string{"MYPW": secret, "T_TOKEN": secret, "T": "csvv"}[k]
		return v, ok
	}
	cases := []struct {
		name, options, want string
	}{
		{"a driver quotes part of the DSN", "dsn: etl:${MYPW}@tcp(127.0.0.1:1)db", "sources[0].dsn: default addr for network 'etl:${MYPW}' unknown"},
		{"an option of the wrong type", "dsn: x\n    rows: ${MYPW}", "sources[0].rows: the value of ${MYPW} is not an integer"},
		{"a format from a variable", "dsn: x\n    format: ${T_TOKEN}", "sources[0].format: unknown input format type \"${T_TOKEN}\""},
		{"a format option from a variable", "dsn: x\n    format: {type: csv, header: \"${T_TOKEN}\"}", "sources[0].format.header: the value of ${T_TOKEN} is not true or false"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := "version: 1\nname: p\nsources:\n  - name: s\n    type: db\n    " + tc.options + "\nsinks: [{name: o, from: s, type: print}]\n"
			sp, err := spec.Parse("p.yaml", []byte(src), lookup)
			if err != nil {
				t.Fatal(err)
			}
			r := testRegistry()
			_, err = r.NewSource("p.yaml", sp.Sources[0], SourceEnv{Formats: r})
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
			if leaks := testenv.SecretLeaks(err.Error(), secret); len(leaks) > 0 {
				t.Errorf("error %q shows %v", err, leaks)
			}
		})
	}
	// The type itself from a variable.
	sp, err := spec.Parse("p.yaml", []byte("version: 1\nname: p\nsources: [{name: s, type: \"${T_TOKEN}\"}]\nsinks: [{name: o, from: s, type: print}]\n"), lookup)
	if err != nil {
		t.Fatal(err)
	}
	_, err = testRegistry().NewSource("p.yaml", sp.Sources[0], SourceEnv{})
	if err == nil || !strings.Contains(err.Error(), `unknown source type "${T_TOKEN}"`) || len(testenv.SecretLeaks(err.Error(), secret)) > 0 {
		t.Errorf("unknown type from a variable: %v", err)
	}
}

// A value from a variable that is no secret (by its name or its option,
// redact.Classify) is shown in the errors about it, as any other value.
func TestConnectorErrorsShowAPlainVariable(t *testing.T) {
	lookup := func(k string) (string, bool) { return map[string]string{"T": "csvv"}[k], k == "T" }
	src := "version: 1\nname: p\nsources:\n  - name: s\n    type: db\n    dsn: x\n    format: ${T}\nsinks: [{name: o, from: s, type: print}]\n"
	sp, err := spec.Parse("p.yaml", []byte(src), lookup)
	if err != nil {
		t.Fatal(err)
	}
	r := testRegistry()
	_, err = r.NewSource("p.yaml", sp.Sources[0], SourceEnv{Formats: r})
	if err == nil || !strings.Contains(err.Error(), `unknown input format type "csvv"`) {
		t.Errorf("error %v lacks the plain variable's value", err)
	}
}
