package elasticsearch

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/pipeline/connector"
)

func TestConfigChecks(t *testing.T) {
	base := func() Config { return Config{Hosts: []string{"http://127.0.0.1:9200"}, Index: "logs"} }
	tests := []struct {
		name  string
		edit  func(*Config)
		field string // "" when valid
	}{
		{"minimal", func(*Config) {}, ""},
		{"hosts separated by ;", func(c *Config) { c.Hosts = []string{"http://a:9200;https://b:9200"} }, ""},
		{"host without scheme", func(c *Config) { c.Hosts = []string{"a:9200"} }, "hosts"},
		{"credentials in the url", func(c *Config) { c.Hosts = []string{"http://u:secret@a:9200"} }, "hosts"},
		{"no host", func(c *Config) { c.Hosts = []string{" ; "} }, "hosts"},
		{"port out of range", func(c *Config) { c.Hosts = []string{"http://a:92000"} }, "hosts"},
		{"port zero", func(c *Config) { c.Hosts = []string{"http://a:0"} }, "hosts"},
		{"upper case index", func(c *Config) { c.Index = "Logs" }, "index"},
		{"index with a comma", func(c *Config) { c.Index = "a,b" }, "index"},
		{"pattern", func(c *Config) { c.Index = "logs-{ts|yyyy-MM-dd}" }, ""},
		{"two dynamic parts", func(c *Config) { c.Index = "{a}-{b}" }, "index"},
		{"unclosed part", func(c *Config) { c.Index = "logs-{ts" }, "index"},
		{"bad date letter", func(c *Config) { c.Index = "logs-{ts|yyyy-MM-dd bb}" }, "index"},
		{"now without format", func(c *Config) { c.Index = "logs-{now()}" }, "index"},
		{"negative actions", func(c *Config) { c.BulkFlushMaxActions = ptr(-1) }, "bulk_flush_max_actions"},
		{"size", func(c *Config) { c.BulkFlushMaxSize = "5mb" }, ""},
		{"bad size", func(c *Config) { c.BulkFlushMaxSize = "5 parsecs" }, "bulk_flush_max_size"},
		{"strategy", func(c *Config) { c.BackoffStrategy = "CONSTANT" }, ""},
		{"no retries", func(c *Config) { c.BackoffStrategy = "disabled" }, "bulk_flush_backoff_strategy"},
		{"negative retries", func(c *Config) { c.BackoffMaxRetries = -1 }, "bulk_flush_backoff_max_retries"},
		{"zero delay", func(c *Config) { c.BackoffDelay = ptr(time.Duration(0)) }, "bulk_flush_backoff_delay"},
		{"user without password", func(c *Config) { c.Username = "elastic" }, "username"},
		{"api key and user", func(c *Config) { c.APIKey, c.Username, c.Password = "k", "u", "p" }, "api_key"},
		{"zero timeout", func(c *Config) { c.SocketTimeout = ptr(time.Duration(0)) }, "socket_timeout"},
		{"parallelism", func(c *Config) { c.Parallelism = 100 }, "parallelism"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := base()
			tt.edit(&cfg)
			_, err := New(cfg, connector.SinkEnv{Name: "es", Formats: connector.NewRegistry()})
			var fe *connector.FieldError
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.field != "" && !errors.As(err, &fe):
				t.Fatalf("got %v, want an error on %s", err, tt.field)
			case tt.field != "" && fe.Field != tt.field:
				t.Fatalf("error on %s (%v), want on %s", fe.Field, err, tt.field)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Fatalf("error shows the password: %v", err)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"2mb", 2 << 20, true}, {"512kb", 512 << 10, true}, {"1 gb", 1 << 30, true}, {"100", 100, true},
		{"0", 0, true}, {"3MB", 3 << 20, true}, {"-1mb", 0, false}, {"mb", 0, false}, {"1.5mb", 0, false},
		{"4gb", 0, false}, {"2 tb", 0, false},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in)
		if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
			t.Errorf("parseSize(%q) = %d, %v; want %d ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}
