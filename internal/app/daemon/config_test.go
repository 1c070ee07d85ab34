package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "etld.yaml")
	file := `pipelines: pipelines.d
state_dir: /srv/etld/state
checkpoint_interval: 30s
shutdown_timeout: 45s
admin:
  address: ${ADMIN_ADDR}
log:
  level: debug
  format: text
`
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ADMIN_ADDR": "127.0.0.1:1234", "ETLD_LOG_LEVEL": "warn", "ETLD_STATE_DIR": "/env/state", "ETLD_LOG_FORMAT": "", "ETLD_SHUTDOWN_TIMEOUT": "12s"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }

	cfg := Defaults()
	if err := cfg.LoadFile(path, lookup); err != nil {
		t.Fatal(err)
	}
	if err := cfg.ApplyEnv(lookup); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Set("state-dir", "/flag/state"); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	want := Config{
		Pipelines:          filepath.Join(dir, "pipelines.d"), // relative to the file
		StateDir:           "/flag/state",                     // flag > env > file
		CheckpointInterval: 30 * time.Second,
		ShutdownTimeout:    12 * time.Second,                                      // env > file
		Admin:              AdminConfig{Enabled: true, Address: "127.0.0.1:1234"}, // ${VAR} expanded; enabled by default
		Log:                LogConfig{Level: "warn", Format: "text"},              // env > file; an empty variable sets nothing
	}
	if cfg != want {
		t.Errorf("config = %+v\nwant     %+v", cfg, want)
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name, file string
		env        map[string]string
		want       string
	}{
		{"unknown key", "pipelines: /p\nadmin:\n  adress: x:1\n", nil, `etld.yaml:3:3: admin.adress: unknown key; did you mean "address"?`},
		{"bad duration", "checkpoint_interval: 10\n", nil, "etld.yaml:1:22: checkpoint_interval: duration \"10\" needs a unit"},
		{"unset variable", "state_dir: ${NOPE_NOT_SET}\n", nil, "etld.yaml:1:12: state_dir: environment variable NOPE_NOT_SET is not set"},
		{"bad yaml", "admin: [\n", nil, "etld.yaml:"},
		{"bad env", "", map[string]string{"ETLD_ADMIN_ENABLED": "sometimes"}, `ETLD_ADMIN_ENABLED: want true or false, got "sometimes"`},
		{"bad level", "log: {level: loud}\n", nil, `log.level "loud": want debug, info, warn or error`},
		{"zero shutdown timeout", "shutdown_timeout: 0s\n", nil, `shutdown_timeout 0s: want a duration above 0`},
		{"bad shutdown timeout", "", map[string]string{"ETLD_SHUTDOWN_TIMEOUT": "soon"}, `ETLD_SHUTDOWN_TIMEOUT: `},
		{"bad address", "admin: {address: localhost}\n", nil, `admin.address "localhost": want host:port`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "etld.yaml")
			if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			lookup := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
			cfg := Defaults()
			err := cfg.LoadFile(path, lookup)
			if err == nil {
				err = cfg.ApplyEnv(lookup)
			}
			if err == nil {
				err = cfg.Validate()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestSetUnknownFlag(t *testing.T) {
	cfg := Defaults()
	if err := cfg.Set("pipeline", "x"); err == nil {
		t.Error("Set of an unknown flag succeeded")
	}
	if err := cfg.Set("checkpoint-interval", "soon"); err == nil || !strings.Contains(err.Error(), "--checkpoint-interval") {
		t.Errorf("Set of a bad duration = %v", err)
	}
}

func TestAdminLoopback(t *testing.T) {
	cases := map[string]bool{
		DefaultAdminAddress: true,
		"[::1]:9464":        true,
		"localhost:9464":    true,
		"127.0.0.2:80":      true,
		":9464":             false,
		"0.0.0.0:9464":      false,
		"[::]:9464":         false,
		"10.0.0.5:9464":     false,
		"nonsense":          false,
	}
	for addr, want := range cases {
		if got := (AdminConfig{Address: addr}).Loopback(); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", addr, got, want)
		}
	}
	if !Defaults().Admin.Loopback() || !Defaults().Admin.Enabled {
		t.Error("the default admin server is not enabled on loopback")
	}
}

func TestAdminTokenRequired(t *testing.T) {
	cases := []struct {
		addr, token string
		want        bool
	}{
		{DefaultAdminAddress, "", false},
		{DefaultAdminAddress, "s3cret", true},
		{"0.0.0.0:9464", "", true},
		{"0.0.0.0:9464", "s3cret", true},
		{":9464", "", true},
		{"10.0.0.5:9464", "", true},
	}
	for _, tc := range cases {
		if got := (AdminConfig{Address: tc.addr, Token: tc.token}).TokenRequired(); got != tc.want {
			t.Errorf("TokenRequired(%q, token %v) = %v, want %v", tc.addr, tc.token != "", got, tc.want)
		}
	}
	cfg := Defaults()
	if err := cfg.ApplyEnv(func(k string) (string, bool) {
		return map[string]string{"ETLD_ADMIN_TOKEN": "t0k"}[k], k == "ETLD_ADMIN_TOKEN"
	}); err != nil || cfg.Admin.Token != "t0k" {
		t.Errorf("ETLD_ADMIN_TOKEN gave %q, %v", cfg.Admin.Token, err)
	}
}

// The shipped etld.yaml documents the defaults: loading it changes nothing.
func TestShippedConfigIsTheDefaults(t *testing.T) {
	cfg := Defaults()
	if err := cfg.LoadFile("../../../configs/etld.yaml", func(string) (string, bool) { return "", false }); err != nil {
		t.Fatal(err)
	}
	if cfg != Defaults() {
		t.Errorf("configs/etld.yaml = %+v\ndefaults          %+v", cfg, Defaults())
	}
}

// TestAdminPprof checks admin.pprof: off by default, set by the file, the
// environment or the flag, and refused when not a boolean.
func TestAdminPprof(t *testing.T) {
	if Defaults().Admin.Pprof {
		t.Fatal("admin.pprof is on by default")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "etld.yaml")
	if err := os.WriteFile(path, []byte("admin:\n  pprof: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Defaults()
	if err := cfg.LoadFile(path, func(string) (string, bool) { return "", false }); err != nil || !cfg.Admin.Pprof {
		t.Errorf("admin.pprof: true in the file: pprof %v, err %v", cfg.Admin.Pprof, err)
	}
	cfg = Defaults()
	if err := cfg.ApplyEnv(func(k string) (string, bool) { return "true", k == "ETLD_ADMIN_PPROF" }); err != nil || !cfg.Admin.Pprof {
		t.Errorf("ETLD_ADMIN_PPROF=true: pprof %v, err %v", cfg.Admin.Pprof, err)
	}
	if err := cfg.Set("admin-pprof", "false"); err != nil || cfg.Admin.Pprof {
		t.Errorf("--admin-pprof=false after the env: pprof %v, err %v", cfg.Admin.Pprof, err)
	}
	if err := cfg.Set("admin-pprof", "maybe"); err == nil || !strings.Contains(err.Error(), `--admin-pprof: want true or false, got "maybe"`) {
		t.Errorf("--admin-pprof=maybe: err %v", err)
	}
}
