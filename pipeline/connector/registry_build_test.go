package connector_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/spec"
)

// halfSource is what a constructor that validates late gives back: a
// pointer type whose methods dereference it.
type halfSource struct{ rows int }

func (s *halfSource) Bounded() bool                                 { return s.rows >= 0 }
func (s *halfSource) Open(context.Context) error                    { return nil }
func (s *halfSource) Read(context.Context, int) (*row.Batch, error) { return nil, nil }
func (s *halfSource) Close(context.Context) error                   { return nil }

type halfConfig struct {
	Rows  int    `yaml:"rows"`
	Kind  string `yaml:"kind"`
	Empty bool   `yaml:"empty"`
	Plain bool   `yaml:"plain"`
}

// newHalf fails the way the built-in constructors do: a typed nil pointer
// with the error, so that the interface it is returned in is not nil.
func newHalf(cfg halfConfig, env connector.SourceEnv) (*halfSource, error) {
	var errs []error
	if cfg.Rows < 0 {
		errs = append(errs, connector.Errorf("rows", "must be >= 0"))
	}
	if cfg.Kind != "" {
		errs = append(errs, connector.Errorf("kind", "unknown kind %q", cfg.Kind))
	}
	if cfg.Plain {
		errs = append(errs, errors.New("a plain error"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if cfg.Empty {
		return nil, nil
	}
	return &halfSource{rows: cfg.Rows}, nil
}

func TestNewSourceNeverReturnsAHalfBuiltConnector(t *testing.T) {
	reg := connector.NewRegistry()
	connector.RegisterSource(reg, "half", "test", func(cfg halfConfig, env connector.SourceEnv) (connector.Source, error) {
		return newHalf(cfg, env)
	})
	tests := []struct {
		name, options string
		want          []string // errors, in file order; none: it builds
	}{
		{"valid", "rows: 3", nil},
		{"one field", "rows: -5", []string{"p.yaml:5:11: sources[0].rows: must be >= 0"}},
		{"two fields", "rows: -5\n    kind: x", []string{
			"p.yaml:5:11: sources[0].rows: must be >= 0",
			`p.yaml:6:11: sources[0].kind: unknown kind "x"`,
		}},
		{"plain error at the connector", "plain: true", []string{"p.yaml:4:5: sources[0]: a plain error"}},
		{"neither connector nor error", "empty: true", []string{"p.yaml:4:5: sources[0]: internal error: the constructor returned neither a connector nor an error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := "version: 1\nname: p\nsources:\n  - name: s\n    " + tt.options + "\n    type: half\n    schema: [id BIGINT]\nsinks:\n  - {name: o, from: s, type: half}\n"
			sp, err := spec.Parse("p.yaml", []byte(doc), func(string) (string, bool) { return "", false })
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			src, err := reg.NewSource("p.yaml", sp.Sources[0], connector.SourceEnv{Name: "s"})
			if tt.want == nil {
				if err != nil || src == nil {
					t.Fatalf("got %v, %v; want a source", src, err)
				}
				return
			}
			if src != nil {
				t.Errorf("got source %#v with the error; want none (a nil interface)", src)
			}
			var list spec.List
			if !errors.As(err, &list) {
				t.Fatalf("got %T %v; want a spec.List", err, err)
			}
			if got := err.Error(); got != strings.Join(tt.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", got, strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestUnknownValue(t *testing.T) {
	tests := []struct {
		got  string
		want []string
		msg  string
	}{
		{"sequense", []string{"random", "sequence"}, `kind: unknown kind "sequense"; did you mean "sequence"? (want random or sequence)`},
		{"zzzzzzzz", []string{"random", "sequence"}, `kind: unknown kind "zzzzzzzz" (want random or sequence)`},
		{"gzp", []string{"none", "gzip", "lz4"}, `kind: unknown kind "gzp"; did you mean "gzip"? (want none, gzip or lz4)`},
	}
	for _, tt := range tests {
		err := connector.UnknownValue("kind", "kind", tt.got, tt.want...)
		var fe *connector.FieldError
		if !errors.As(err, &fe) || fe.Field != "kind" {
			t.Errorf("%q: got %#v, want a FieldError for kind", tt.got, err)
		}
		if err.Error() != tt.msg {
			t.Errorf("%q: got %s, want %s", tt.got, err, tt.msg)
		}
	}
}
