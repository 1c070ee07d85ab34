package elasticsearch

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
)

// Config is the sink's options.
type Config struct {
	Hosts          []string `yaml:"hosts,required"`
	Index          string   `yaml:"index,required"`
	KeyDelimiter   *string  `yaml:"key_delimiter"`
	KeyNullLiteral *string  `yaml:"key_null_literal"`

	BulkFlushMaxActions *int           `yaml:"bulk_flush_max_actions"`
	BulkFlushMaxSize    string         `yaml:"bulk_flush_max_size"`
	BulkFlushInterval   *time.Duration `yaml:"bulk_flush_interval"`

	BackoffStrategy   string         `yaml:"bulk_flush_backoff_strategy"`
	BackoffMaxRetries int            `yaml:"bulk_flush_backoff_max_retries"`
	BackoffDelay      *time.Duration `yaml:"bulk_flush_backoff_delay"`

	Username string `yaml:"username"`
	Password string `yaml:"password"`
	APIKey   string `yaml:"api_key"`
	CAFile   string `yaml:"ca_file"`

	ConnectionTimeout *time.Duration `yaml:"connection_timeout"`
	SocketTimeout     *time.Duration `yaml:"socket_timeout"`

	Parallelism int `yaml:"parallelism"`
}

const (
	defaultMaxActions  = 1000
	defaultMaxSize     = 2 << 20
	defaultInterval    = time.Second
	defaultParallelism = 2
	maxParallelism     = 64
	// maxBackoff caps exponential waits between retries: a cluster back
	// from an outage is written to again within a second, and a health
	// probe meanwhile (see deliver) notices it sooner.
	maxBackoff = time.Second
)

// settings are the checked options.
type settings struct {
	hosts          []string
	index          *indexPattern
	delimiter      string
	nullLiteral    string
	maxActions     int
	maxSize        int
	interval       time.Duration
	backoff        retry.Backoff
	username       string
	password       string
	apiKey         string
	caFile         string
	connectTimeout time.Duration
	socketTimeout  time.Duration
	parallelism    int
}

// check validates cfg; every complaint names its option.
func check(cfg Config) (settings, error) {
	hosts, errs := checkHosts(cfg.Hosts)
	st := settings{
		hosts:       hosts,
		delimiter:   "_",
		nullLiteral: "null",
		maxActions:  defaultMaxActions,
		maxSize:     defaultMaxSize,
		interval:    defaultInterval,
		username:    cfg.Username,
		password:    cfg.Password,
		apiKey:      cfg.APIKey,
		caFile:      cfg.CAFile,
		parallelism: defaultParallelism,
		// A socket timeout shorter than a busy cluster's bulk time would
		// resend requests that were going to succeed.
		connectTimeout: 10 * time.Second,
		socketTimeout:  60 * time.Second,
	}
	if len(st.hosts) == 0 && len(errs) == 0 {
		errs = append(errs, connector.Errorf("hosts", "name at least one host, e.g. http://127.0.0.1:9200"))
	}
	idx, err := parseIndex(cfg.Index)
	if err != nil {
		errs = append(errs, connector.Errorf("index", "%v", err))
	}
	st.index = idx
	if cfg.KeyDelimiter != nil {
		st.delimiter = *cfg.KeyDelimiter
	}
	if cfg.KeyNullLiteral != nil {
		st.nullLiteral = *cfg.KeyNullLiteral
	}
	if cfg.BulkFlushMaxActions != nil {
		if *cfg.BulkFlushMaxActions < 0 {
			errs = append(errs, connector.Errorf("bulk_flush_max_actions", "must be 0 (no limit) or more, got %d", *cfg.BulkFlushMaxActions))
		}
		st.maxActions = *cfg.BulkFlushMaxActions
	}
	if cfg.BulkFlushMaxSize != "" {
		n, err := parseSize(cfg.BulkFlushMaxSize)
		if err != nil {
			errs = append(errs, connector.Errorf("bulk_flush_max_size", "%v", err))
		}
		st.maxSize = n
	}
	if cfg.BulkFlushInterval != nil {
		if *cfg.BulkFlushInterval < 0 {
			errs = append(errs, connector.Errorf("bulk_flush_interval", "must be 0 (off) or positive"))
		}
		st.interval = *cfg.BulkFlushInterval
	}
	var boErrs []error
	st.backoff, boErrs = checkBackoff(cfg)
	errs = append(errs, boErrs...)
	if (cfg.Username == "") != (cfg.Password == "") {
		errs = append(errs, connector.Errorf("username", "username and password go together"))
	}
	if cfg.APIKey != "" && cfg.Username != "" {
		errs = append(errs, connector.Errorf("api_key", "give either api_key or username/password, not both"))
	}
	for _, t := range []struct {
		field string
		v     *time.Duration
		dst   *time.Duration
	}{{"connection_timeout", cfg.ConnectionTimeout, &st.connectTimeout}, {"socket_timeout", cfg.SocketTimeout, &st.socketTimeout}} {
		if t.v == nil {
			continue
		}
		if *t.v <= 0 {
			errs = append(errs, connector.Errorf(t.field, "must be positive"))
		}
		*t.dst = *t.v
	}
	if cfg.Parallelism != 0 {
		if cfg.Parallelism < 1 || cfg.Parallelism > maxParallelism {
			errs = append(errs, connector.Errorf("parallelism", "must be from 1 to %d, got %d", maxParallelism, cfg.Parallelism))
		}
		st.parallelism = cfg.Parallelism
	}
	return st, errors.Join(errs...)
}

// checkHosts splits the hosts at ; and checks each URL.
func checkHosts(hosts []string) ([]string, []error) {
	var ok []string
	var errs []error
	for _, h := range hosts {
		for _, one := range strings.Split(h, ";") {
			one = strings.TrimSpace(one)
			if one == "" {
				continue
			}
			u, err := url.Parse(one)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				errs = append(errs, connector.Errorf("hosts", "%q: want http://host:port or https://host:port", redactURL(one)))
				continue
			}
			if u.User != nil {
				errs = append(errs, connector.Errorf("hosts", "%q: put credentials in username/password (from ${VAR}), not in the URL", redactURL(one)))
				continue
			}
			if p := u.Port(); p != "" {
				// url.Parse takes any digits; the dial would fail only at Open.
				if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
					errs = append(errs, connector.Errorf("hosts", "%q: port %s is not a number from 1 to 65535", one, p))
					continue
				}
			}
			ok = append(ok, one)
		}
	}
	return ok, errs
}

// checkBackoff reads the bulk_flush_backoff_* options.
func checkBackoff(cfg Config) (retry.Backoff, []error) {
	var errs []error
	delay := 100 * time.Millisecond
	if cfg.BackoffDelay != nil {
		if *cfg.BackoffDelay <= 0 {
			errs = append(errs, connector.Errorf("bulk_flush_backoff_delay", "must be positive"))
		}
		delay = *cfg.BackoffDelay
	}
	backoff := retry.Backoff{Initial: delay, Max: max(maxBackoff, delay)}
	switch strings.ToLower(cfg.BackoffStrategy) {
	case "", "exponential":
	case "constant":
		backoff.Max = delay
	default:
		errs = append(errs, connector.Errorf("bulk_flush_backoff_strategy", "want exponential or constant, got %q (retries cannot be disabled: the sink never drops rows)", cfg.BackoffStrategy))
	}
	if cfg.BackoffMaxRetries < 0 {
		errs = append(errs, connector.Errorf("bulk_flush_backoff_max_retries", "must be 0 (retry forever) or more"))
	} else if cfg.BackoffMaxRetries > 0 {
		backoff.Attempts = cfg.BackoffMaxRetries + 1
	}
	return backoff, errs
}

// parseSize reads Flink's memory sizes: 2mb, 512kb, 1 gb, 1048576 (bytes).
func parseSize(s string) (int, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	num := strings.TrimRight(t, "abcdefghijklmnopqrstuvwxyz ")
	unit := strings.TrimSpace(t[len(num):])
	var n int
	if _, err := fmt.Sscanf(num, "%d", &n); err != nil || n < 0 || fmt.Sprint(n) != num {
		return 0, fmt.Errorf("want a size such as 2mb, 512kb or 0 (no limit), got %q", s)
	}
	mult := 0
	switch unit {
	case "", "b", "bytes":
		mult = 1
	case "k", "kb", "kib":
		mult = 1 << 10
	case "m", "mb", "mib":
		mult = 1 << 20
	case "g", "gb", "gib":
		mult = 1 << 30
	default:
		return 0, fmt.Errorf("unknown size unit %q in %q: want b, kb, mb or gb", unit, s)
	}
	if n > (1<<31)/mult {
		return 0, fmt.Errorf("%q is too large (at most 2gb)", s)
	}
	return n * mult, nil
}

// redactURL hides a password written into a URL.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		if i := strings.Index(s, "@"); i >= 0 {
			return "…@" + s[i+1:]
		}
		return s
	}
	return u.Redacted()
}
