// Package kafkaconf is the Kafka client configuration the Kafka source and
// sink share: brokers, client id, TLS, SASL and the dial timeout, read from
// the connector's YAML mapping beside the connector's own options, and
// turned into segmentio/kafka-go's Dialer (readers, admin connections) and
// Transport (writers, clients).
//
// The options, as they appear in a pipeline file:
//
//	brokers: [127.0.0.1:9092]    # or "host1:9092,host2:9092" (Flink's properties.bootstrap.servers)
//	client_id: etld              # default etld
//	dial_timeout: 10s            # default 10s
//	tls: true                    # or a mapping:
//	tls:
//	  enabled: true              # default true once the mapping is given
//	  ca_file: ca.pem            # default: the system roots
//	  cert_file: client.pem      # client certificate, with key_file
//	  key_file: client.key
//	  server_name: kafka.internal
//	  insecure_skip_verify: false
//	sasl:
//	  mechanism: SCRAM-SHA-512   # PLAIN | SCRAM-SHA-256 | SCRAM-SHA-512
//	  username: etld
//	  password: ${KAFKA_PASSWORD}
//
// The password is never printed: String, LogValue and the fmt verbs on
// Config and Secret show it as "***", and no error carries it.
package kafkaconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
	"gopkg.in/yaml.v3"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/spec"
)

// Config is the Kafka client part of a Kafka connector's options. A
// connector decodes it with Decode, beside its own options.
type Config struct {
	// Brokers are the bootstrap addresses, host:port. A single string may
	// list several, separated by commas.
	Brokers []string `yaml:"brokers,required"`
	// ClientID names the client to the brokers (logs, quotas).
	ClientID string `yaml:"client_id"`
	// TLS is off unless set.
	TLS TLS `yaml:"tls"`
	// SASL is nil when the brokers need no authentication.
	SASL *SASL `yaml:"sasl"`
	// DialTimeout bounds one connection attempt.
	DialTimeout time.Duration `yaml:"dial_timeout"`
}

// Defaults.
const (
	DefaultClientID    = "etld"
	DefaultDialTimeout = 10 * time.Second
)

// Keys are the option names Config reads.
var Keys = []string{"brokers", "client_id", "tls", "sasl", "dial_timeout"}

// TLS is the tls option: `tls: true` or a mapping.
type TLS struct {
	Enabled            bool   `yaml:"enabled"`
	CAFile             string `yaml:"ca_file"`
	CertFile           string `yaml:"cert_file"`
	KeyFile            string `yaml:"key_file"`
	ServerName         string `yaml:"server_name"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
}

// DecodeNode implements spec.NodeDecoder: a boolean turns TLS on or off
// with the system roots; a mapping turns it on unless it says
// enabled: false.
func (t *TLS) DecodeNode(file string, n *yaml.Node, path string) error {
	if n.Kind == yaml.ScalarNode {
		b, err := strconv.ParseBool(n.Value)
		if err != nil {
			return spec.Errorf(spec.At(file, n), path, "want true, false or a mapping (enabled, ca_file, cert_file, key_file, server_name, insecure_skip_verify), got %q", n.Value)
		}
		*t = TLS{Enabled: b}
		return nil
	}
	type plainTLS TLS // without DecodeNode, so that spec.Decode reads the fields
	v := plainTLS{Enabled: true}
	if err := spec.Decode(file, n, path, &v); err != nil {
		return err
	}
	*t = TLS(v)
	return nil
}

// SASL is the sasl option.
type SASL struct {
	// Mechanism is PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (any case).
	Mechanism string `yaml:"mechanism,required"`
	Username  string `yaml:"username,required"`
	Password  Secret `yaml:"password"`
}

// Secret is a string that prints as "***" whichever way it is printed.
type Secret string

const redacted = "***"

func (s Secret) String() string               { return redactedIf(s) }
func (s Secret) GoString() string             { return strconv.Quote(redactedIf(s)) }
func (s Secret) LogValue() slog.Value         { return slog.StringValue(redactedIf(s)) }
func (s Secret) MarshalText() ([]byte, error) { return []byte(redactedIf(s)), nil }

func redactedIf(s Secret) string {
	if s == "" {
		return ""
	}
	return redacted
}

// Addrs returns the broker addresses, with comma-separated lists split and
// blanks trimmed.
func (c Config) Addrs() []string {
	var out []string
	for _, b := range c.Brokers {
		for _, a := range strings.Split(b, ",") {
			if a = strings.TrimSpace(a); a != "" {
				out = append(out, a)
			}
		}
	}
	return out
}

func (c Config) clientID() string {
	if c.ClientID == "" {
		return DefaultClientID
	}
	return c.ClientID
}

func (c Config) dialTimeout() time.Duration {
	if c.DialTimeout <= 0 {
		return DefaultDialTimeout
	}
	return c.DialTimeout
}

// Validate checks the options without I/O; its errors name the option
// (connector.Errorf), so that they point at the pipeline file's line.
func (c Config) Validate() error {
	var errs []error
	addrs := c.Addrs()
	if len(addrs) == 0 {
		errs = append(errs, connector.Errorf("brokers", "want at least one broker address host:port"))
	}
	for _, a := range addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil || host == "" {
			errs = append(errs, connector.Errorf("brokers", "broker %q: want host:port, e.g. 127.0.0.1:9092", a))
			continue
		}
		if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
			errs = append(errs, connector.Errorf("brokers", "broker %q: port %q is not a number from 1 to 65535", a, port))
		}
	}
	if t := c.TLS; t.Enabled && (t.CertFile == "") != (t.KeyFile == "") {
		field := "tls.key_file"
		if t.CertFile == "" {
			field = "tls.cert_file"
		}
		errs = append(errs, connector.Errorf(field, "cert_file and key_file go together: give both for a client certificate, or neither"))
	}
	if s := c.SASL; s != nil {
		if _, err := mechanismName(s.Mechanism); err != nil {
			errs = append(errs, connector.Errorf("sasl.mechanism", "%v", err))
		}
		if s.Username == "" {
			errs = append(errs, connector.Errorf("sasl.username", "must not be empty"))
		}
		if s.Password == "" {
			errs = append(errs, connector.Errorf("sasl.password", "must not be empty; give it from the environment, e.g. password: ${KAFKA_PASSWORD}"))
		}
	}
	return errors.Join(errs...)
}

// CheckTopic refuses a name Kafka would refuse as a topic: empty, . or
// .., longer than 249 bytes, or with a character other than ASCII
// letters, digits, '.', '_' and '-'.
func CheckTopic(name string) error {
	switch {
	case name == "":
		return errors.New("the topic name is empty")
	case name == "." || name == "..":
		return fmt.Errorf("%q is not a valid Kafka topic name", name)
	case len(name) > 249 || strings.ContainsFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
	}):
		return fmt.Errorf("%q is not a valid Kafka topic name (letters, digits, '.', '_' and '-', at most 249)", name)
	}
	return nil
}

func mechanismName(m string) (string, error) {
	switch u := strings.ToUpper(strings.TrimSpace(m)); u {
	case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		return u, nil
	}
	return "", fmt.Errorf("unknown SASL mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", m)
}

// TLSConfig returns the TLS client configuration, reading the CA and
// client certificate files, or nil when TLS is off.
func (c Config) TLSConfig() (*tls.Config, error) {
	t := c.TLS
	if !t.Enabled {
		return nil, nil
	}
	cfg := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         t.ServerName,
		InsecureSkipVerify: t.InsecureSkipVerify,
	}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("tls.ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls.ca_file: %s holds no PEM certificate", t.CAFile)
		}
		cfg.RootCAs = pool
	}
	if t.CertFile != "" || t.KeyFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("tls.cert_file/key_file: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// Mechanism returns the SASL mechanism, or nil without sasl.
func (c Config) Mechanism() (sasl.Mechanism, error) {
	s := c.SASL
	if s == nil {
		return nil, nil
	}
	name, err := mechanismName(s.Mechanism)
	if err != nil {
		return nil, fmt.Errorf("sasl.mechanism: %w", err)
	}
	switch name {
	case "PLAIN":
		return plain.Mechanism{Username: s.Username, Password: string(s.Password)}, nil
	case "SCRAM-SHA-256", "SCRAM-SHA-512":
		algo := scram.SHA256
		if name == "SCRAM-SHA-512" {
			algo = scram.SHA512
		}
		m, err := scram.Mechanism(algo, s.Username, string(s.Password))
		if err != nil {
			// The error comes from SASLprep of the credentials; it names
			// no password, but say only which step failed to be sure.
			return nil, fmt.Errorf("sasl: %s credentials of user %q are not valid UTF-8 text for SASLprep", name, s.Username)
		}
		return m, nil
	}
	return nil, fmt.Errorf("sasl.mechanism: %q not supported", s.Mechanism)
}

// security is the TLS configuration and SASL mechanism that Dialer and
// Transport both carry.
func (c Config) security() (*tls.Config, sasl.Mechanism, error) {
	tlsCfg, err := c.TLSConfig()
	if err != nil {
		return nil, nil, err
	}
	mech, err := c.Mechanism()
	if err != nil {
		return nil, nil, err
	}
	return tlsCfg, mech, nil
}

// Dialer returns a kafka-go Dialer for readers and admin connections.
func (c Config) Dialer() (*kafka.Dialer, error) {
	tlsCfg, mech, err := c.security()
	if err != nil {
		return nil, err
	}
	return &kafka.Dialer{
		ClientID:      c.clientID(),
		Timeout:       c.dialTimeout(),
		DualStack:     true,
		TLS:           tlsCfg,
		SASLMechanism: mech,
	}, nil
}

// Transport returns a kafka-go Transport for writers and clients.
func (c Config) Transport() (*kafka.Transport, error) {
	tlsCfg, mech, err := c.security()
	if err != nil {
		return nil, err
	}
	d := &net.Dialer{Timeout: c.dialTimeout()}
	return &kafka.Transport{
		Dial:        d.DialContext,
		DialTimeout: c.dialTimeout(),
		ClientID:    c.clientID(),
		TLS:         tlsCfg,
		SASL:        mech,
	}, nil
}

// String describes the configuration for logs and errors, without the
// password.
func (c Config) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "brokers=%s client_id=%s", strings.Join(c.Addrs(), ","), c.clientID())
	if c.TLS.Enabled {
		b.WriteString(" tls=on")
		if c.TLS.InsecureSkipVerify {
			b.WriteString("(insecure_skip_verify)")
		}
	}
	if s := c.SASL; s != nil {
		fmt.Fprintf(&b, " sasl=%s user=%s password=%s", strings.ToUpper(s.Mechanism), s.Username, s.Password)
	}
	return b.String()
}

// GoString keeps %#v from printing the password field by field.
func (c Config) GoString() string { return "kafkaconf.Config{" + c.String() + "}" }

// Format makes every fmt verb (%v, %+v, %s, %q) print String: the default
// %+v would print the fields, and Secret redacts itself, but a copy of the
// password in a future field would not.
func (c Config) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		fmt.Fprintf(f, "%q", c.String())
		return
	}
	if verb == 'v' && f.Flag('#') {
		_, _ = f.Write([]byte(c.GoString()))
		return
	}
	_, _ = f.Write([]byte(c.String()))
}

// LogValue implements slog.LogValuer.
func (c Config) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("brokers", strings.Join(c.Addrs(), ",")),
		slog.String("client_id", c.clientID()),
		slog.Bool("tls", c.TLS.Enabled),
	}
	if s := c.SASL; s != nil {
		attrs = append(attrs, slog.String("sasl", strings.ToUpper(s.Mechanism)), slog.String("user", s.Username))
	}
	return slog.GroupValue(attrs...)
}

// Decode reads a Kafka connector's options from the mapping n: the keys of
// Keys into kc, the others into own, a pointer to the connector's own
// option struct, with skip naming the keys etld reads itself
// (spec.CommonSourceKeys or spec.CommonSinkKeys). spec.Decode has no
// inline structs, so a connector's config type embeds neither and calls
// Decode from its DecodeNode:
//
//	type Config struct {
//		Kafka kafkaconf.Config `yaml:"-"`
//		Topic string           `yaml:"topic,required"`
//	}
//
//	func (c *Config) DecodeNode(file string, n *yaml.Node, path string) error {
//		type own Config // without DecodeNode
//		return kafkaconf.Decode(file, n, path, &c.Kafka, (*own)(c), spec.CommonSinkKeys...)
//	}
//
// An unknown key is reported by whichever half has the closest name, so
// `broker:` still gets "did you mean brokers".
func Decode(file string, n *yaml.Node, path string, kc *Config, own any, skip ...string) error {
	if n.Kind != yaml.MappingNode {
		return spec.Decode(file, n, path, own, skip...)
	}
	ownKeys := yamlKeys(own)
	kafkaNode := &yaml.Node{Kind: yaml.MappingNode, Tag: n.Tag, Line: n.Line, Column: n.Column}
	ownNode := &yaml.Node{Kind: yaml.MappingNode, Tag: n.Tag, Line: n.Line, Column: n.Column}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := n.Content[i].Value
		toKafka := slices.Contains(Keys, key)
		if !toKafka && !slices.Contains(ownKeys, key) && !slices.Contains(skip, key) {
			toKafka = slices.Contains(Keys, spec.Closest(key, slices.Concat(Keys, ownKeys)))
		}
		if toKafka {
			kafkaNode.Content = append(kafkaNode.Content, n.Content[i], n.Content[i+1])
		} else {
			ownNode.Content = append(ownNode.Content, n.Content[i], n.Content[i+1])
		}
	}
	var list spec.List
	list.Add(spec.Decode(file, kafkaNode, path, kc))
	list.Add(spec.Decode(file, ownNode, path, own, slices.Concat(skip, Keys)...))
	return list.Err()
}

// yamlKeys lists the option names of the struct out points to.
func yamlKeys(out any) []string {
	var names []string
	t := reflectStruct(out)
	if t == nil {
		return nil
	}
	for i := range t.NumField() {
		tag := t.Field(i).Tag.Get("yaml")
		if tag == "" || tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		names = append(names, name)
	}
	return names
}

func reflectStruct(out any) reflect.Type {
	t := reflect.TypeOf(out)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	return t
}

// Refused reports whether err is the broker refusing who we are or what
// we may do (a wrong SASL password, a missing ACL): retrying cannot fix
// it, so a connector fails at once with the broker's reason instead of
// retrying until it is stopped.
func Refused(err error) bool {
	for _, e := range []kafka.Error{
		kafka.SASLAuthenticationFailed,
		kafka.UnsupportedSASLMechanism,
		kafka.IllegalSASLState,
		kafka.TopicAuthorizationFailed,
		kafka.GroupAuthorizationFailed,
		kafka.ClusterAuthorizationFailed,
		kafka.TransactionalIDAuthorizationFailed,
	} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
