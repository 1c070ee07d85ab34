package daemon

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/spec"
)

// Config is the daemon's configuration: etld.yaml, then ETLD_*
// environment variables, then flags, each overriding the one before.
type Config struct {
	// Pipelines is the directory of pipeline files (*.yaml, *.yml).
	Pipelines string `yaml:"pipelines"`
	// StateDir holds checkpoints, one directory per pipeline.
	StateDir string `yaml:"state_dir"`
	// CheckpointInterval is the default for pipelines that set none; 0
	// leaves the runtime's default.
	CheckpointInterval time.Duration `yaml:"checkpoint_interval"`
	// ShutdownTimeout bounds a graceful stop (SIGTERM, SIGINT, or a
	// reload that stops a pipeline): past it the runs are abandoned,
	// which loses nothing, since the next start resumes from the last
	// checkpoint. A stop that waits for a sink whose server is down would
	// otherwise never end.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	Admin           AdminConfig   `yaml:"admin"`
	Log             LogConfig     `yaml:"log"`
}

// AdminConfig is the admin HTTP server's.
type AdminConfig struct {
	Enabled bool `yaml:"enabled"`
	// Address is host:port; loopback by default, because /pipelines and
	// /metrics describe the pipelines to whoever can reach them.
	Address string `yaml:"address"`
	// Token guards /ui and /pipelines: required when Address is not
	// loopback (without one they answer 401 to everyone), checked on
	// loopback too when set. Give it as ${VAR} in etld.yaml or through
	// ETLD_ADMIN_TOKEN; it is a secret and never logged.
	Token string `yaml:"token"`
	// Pprof serves Go's profiles at /debug/pprof/, behind the token
	// wherever /pipelines needs it (TokenRequired). Off by default.
	Pprof bool `yaml:"pprof"`
}

// TokenRequired reports whether /ui and /pipelines need the token: the
// address is not loopback, or a token is set.
func (a AdminConfig) TokenRequired() bool { return !a.Loopback() || a.Token != "" }

// LogConfig is the logger's.
type LogConfig struct {
	Level string `yaml:"level"` // debug, info, warn, error
	// Format is text or json; "" picks text on a terminal, json otherwise.
	Format string `yaml:"format"`
}

// DefaultShutdownTimeout is ShutdownTimeout's default. The systemd unit's
// TimeoutStopSec is a little longer, so that etld, not SIGKILL, ends a
// stop that runs out of time, and says what it left.
const DefaultShutdownTimeout = 30 * time.Second

// DefaultAdminAddress listens on loopback only.
const DefaultAdminAddress = "127.0.0.1:9464"

// Defaults is the configuration with nothing set: the paths of the
// container image and of the systemd unit.
func Defaults() Config {
	return Config{
		Pipelines: "/etc/etld/pipelines",
		StateDir:  "/var/lib/etld",

		ShutdownTimeout: DefaultShutdownTimeout,
		Admin:           AdminConfig{Enabled: true, Address: DefaultAdminAddress},
		Log:             LogConfig{Level: "info"},
	}
}

// Setting is one configuration key with its flag and environment
// variable, all three set through the same parser.
type Setting struct {
	Key  string // the path in etld.yaml, e.g. admin.address
	Flag string // without dashes
	Env  string
	Help string
	set  func(c *Config, v string) error
}

// Settings lists every key that flags and the environment can set.
var Settings = []Setting{
	{"pipelines", "pipelines", "ETLD_PIPELINES", "directory of pipeline files", func(c *Config, v string) error {
		c.Pipelines = v
		return nil
	}},
	{"state_dir", "state-dir", "ETLD_STATE_DIR", "directory for checkpoints", func(c *Config, v string) error {
		c.StateDir = v
		return nil
	}},
	{"checkpoint_interval", "checkpoint-interval", "ETLD_CHECKPOINT_INTERVAL", "default checkpoint interval, e.g. 10s", func(c *Config, v string) error {
		d, err := spec.ParseDuration(v)
		c.CheckpointInterval = d
		return err
	}},
	{"shutdown_timeout", "shutdown-timeout", "ETLD_SHUTDOWN_TIMEOUT", "deadline of a graceful stop, e.g. 30s; past it etld exits 1 and resumes from its checkpoint on the next start", func(c *Config, v string) error {
		d, err := spec.ParseDuration(v)
		c.ShutdownTimeout = d
		return err
	}},
	{"admin.enabled", "admin-enabled", "ETLD_ADMIN_ENABLED", "serve /healthz, /readyz, /metrics, /pipelines (true or false)", func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("want true or false, got %q", v)
		}
		c.Admin.Enabled = b
		return nil
	}},
	{"admin.address", "admin-address", "ETLD_ADMIN_ADDRESS", "admin HTTP host:port (default " + DefaultAdminAddress + ")", func(c *Config, v string) error {
		c.Admin.Address = v
		return nil
	}},
	{"admin.token", "admin-token", "ETLD_ADMIN_TOKEN", "token for /ui and /pipelines; required when admin.address is not loopback (prefer the variable: a flag shows in ps)", func(c *Config, v string) error {
		c.Admin.Token = v
		return nil
	}},
	{"admin.pprof", "admin-pprof", "ETLD_ADMIN_PPROF", "serve Go's profiles at /debug/pprof/ on the admin server, behind admin.token like /pipelines (true or false; default false)", func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("want true or false, got %q", v)
		}
		c.Admin.Pprof = b
		return nil
	}},
	{"log.level", "log-level", "ETLD_LOG_LEVEL", "debug, info, warn or error", func(c *Config, v string) error {
		c.Log.Level = v
		return nil
	}},
	{"log.format", "log-format", "ETLD_LOG_FORMAT", "text or json (default: text on a terminal)", func(c *Config, v string) error {
		c.Log.Format = v
		return nil
	}},
}

// EnvConfig names the environment variable that gives the config file
// when --config is not set.
const EnvConfig = "ETLD_CONFIG"

// LoadFile reads etld.yaml over c. Relative paths in the file are taken
// from the file's directory, so the file means the same from any working
// directory. Errors name file:line:col.
func (c *Config) LoadFile(path string, lookup func(string) (string, bool)) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("daemon config: %w", err)
	}
	root, err := spec.ReadYAML(path, data, lookup)
	if err != nil || root == nil {
		return err
	}
	if err := spec.Decode(path, root, "", c); err != nil {
		return err
	}
	// The defaults are absolute, so a relative path came from the file.
	base := filepath.Dir(path)
	for _, p := range []*string{&c.Pipelines, &c.StateDir} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(base, *p)
		}
	}
	return nil
}

// ApplyEnv sets every key whose ETLD_* variable is set and not empty.
func (c *Config) ApplyEnv(lookup func(string) (string, bool)) error {
	for _, s := range Settings {
		if v, ok := lookup(s.Env); ok && v != "" {
			if err := s.set(c, v); err != nil {
				return fmt.Errorf("%s: %w", s.Env, err)
			}
		}
	}
	return nil
}

// Set sets the key named by a flag (without dashes).
func (c *Config) Set(flag, value string) error {
	for _, s := range Settings {
		if s.Flag == flag {
			if err := s.set(c, value); err != nil {
				return fmt.Errorf("--%s: %w", flag, err)
			}
			return nil
		}
	}
	return fmt.Errorf("unknown setting --%s", flag)
}

// Validate checks the values that have a fixed form.
func (c *Config) Validate() error {
	var errs []string
	if c.Pipelines == "" {
		errs = append(errs, "pipelines: want the directory of the pipeline files")
	}
	if c.ShutdownTimeout <= 0 {
		errs = append(errs, fmt.Sprintf("shutdown_timeout %s: want a duration above 0, e.g. %s", c.ShutdownTimeout, DefaultShutdownTimeout))
	}
	switch strings.ToLower(c.Log.Level) {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Sprintf("log.level %q: want debug, info, warn or error", c.Log.Level))
	}
	switch c.Log.Format {
	case "", "text", "json":
	default:
		errs = append(errs, fmt.Sprintf("log.format %q: want text or json", c.Log.Format))
	}
	if c.Admin.Enabled {
		if _, port, err := net.SplitHostPort(c.Admin.Address); err != nil || port == "" {
			errs = append(errs, fmt.Sprintf("admin.address %q: want host:port, e.g. %s", c.Admin.Address, DefaultAdminAddress))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("daemon config: %s", strings.Join(errs, "; "))
	}
	return nil
}

// Loopback reports whether the admin address listens on loopback only.
// An empty host (":9464") listens everywhere.
func (a AdminConfig) Loopback() bool {
	host, _, err := net.SplitHostPort(a.Address)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
