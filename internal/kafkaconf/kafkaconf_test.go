package kafkaconf

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/spec"
)

// ownOptions stands for a connector's own options.
type ownOptions struct {
	Topic string `yaml:"topic,required"`
	Acks  string `yaml:"acks"`
}

func decode(t *testing.T, text string) (Config, ownOptions, error) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	var kc Config
	var own ownOptions
	err := Decode("p.yaml", doc.Content[0], "sinks[0]", &kc, &own, spec.CommonSinkKeys...)
	return kc, own, err
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		check   func(t *testing.T, kc Config, own ownOptions)
		wantErr string
	}{
		{
			name: "list and own keys",
			yaml: "name: out\ntype: kafka\nbrokers: [a:1, b:2]\ntopic: t\nacks: all\nclient_id: me\ndial_timeout: 3s",
			check: func(t *testing.T, kc Config, own ownOptions) {
				if got := strings.Join(kc.Addrs(), " "); got != "a:1 b:2" {
					t.Errorf("addrs = %q", got)
				}
				if own.Topic != "t" || own.Acks != "all" || kc.ClientID != "me" || kc.DialTimeout != 3*time.Second {
					t.Errorf("got %#v / %+v, dial %s", kc, own, kc.DialTimeout)
				}
			},
		},
		{
			name: "comma-separated string",
			yaml: "brokers: 'a:1, b:2,,c:3'\ntopic: t",
			check: func(t *testing.T, kc Config, _ ownOptions) {
				if got := strings.Join(kc.Addrs(), " "); got != "a:1 b:2 c:3" {
					t.Errorf("addrs = %q", got)
				}
			},
		},
		{
			name: "tls true",
			yaml: "brokers: a:1\ntopic: t\ntls: true",
			check: func(t *testing.T, kc Config, _ ownOptions) {
				if kc.TLS != (TLS{Enabled: true}) {
					t.Errorf("tls = %+v", kc.TLS)
				}
			},
		},
		{
			name: "tls mapping turns it on",
			yaml: "brokers: a:1\ntopic: t\ntls: {ca_file: ca.pem, server_name: k}",
			check: func(t *testing.T, kc Config, _ ownOptions) {
				if kc.TLS != (TLS{Enabled: true, CAFile: "ca.pem", ServerName: "k"}) {
					t.Errorf("tls = %+v", kc.TLS)
				}
			},
		},
		{
			name: "tls mapping disabled",
			yaml: "brokers: a:1\ntopic: t\ntls: {enabled: false, ca_file: ca.pem}",
			check: func(t *testing.T, kc Config, _ ownOptions) {
				if kc.TLS.Enabled {
					t.Errorf("tls = %+v", kc.TLS)
				}
			},
		},
		{
			name: "sasl",
			yaml: "brokers: a:1\ntopic: t\nsasl: {mechanism: scram-sha-256, username: u, password: p}",
			check: func(t *testing.T, kc Config, _ ownOptions) {
				if kc.SASL == nil || kc.SASL.Mechanism != "scram-sha-256" || kc.SASL.Username != "u" || kc.SASL.Password != "p" {
					t.Errorf("sasl = %+v", kc.SASL)
				}
			},
		},
		{name: "missing brokers", yaml: "topic: t", wantErr: "sinks[0].brokers: missing required key"},
		{name: "missing own required", yaml: "brokers: a:1", wantErr: "sinks[0].topic: missing required key"},
		{name: "kafka typo", yaml: "broker: a:1\ntopic: t", wantErr: `p.yaml:1:1: sinks[0].broker: unknown key; did you mean "brokers"?`},
		{name: "own typo", yaml: "brokers: a:1\ntopik: t", wantErr: `sinks[0].topik: unknown key; did you mean "topic"?`},
		{name: "tls bad scalar", yaml: "brokers: a:1\ntopic: t\ntls: maybe", wantErr: `sinks[0].tls: want true, false or a mapping`},
		{name: "tls unknown key", yaml: "brokers: a:1\ntopic: t\ntls: {ca: x}", wantErr: `sinks[0].tls.ca: unknown key`},
		{name: "bad duration", yaml: "brokers: a:1\ntopic: t\ndial_timeout: 5", wantErr: `needs a unit`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kc, own, err := decode(t, tt.yaml)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, kc, own)
		})
	}
}

func TestValidate(t *testing.T) {
	ok := Config{Brokers: []string{"127.0.0.1:9092"}}
	tests := []struct {
		name      string
		cfg       func(c *Config)
		wantField string // "" for no error
		wantMsg   string
	}{
		{name: "ok", cfg: func(c *Config) {}},
		{name: "no brokers", cfg: func(c *Config) { c.Brokers = []string{" , "} }, wantField: "brokers", wantMsg: "at least one"},
		{name: "no port", cfg: func(c *Config) { c.Brokers = []string{"kafka"} }, wantField: "brokers", wantMsg: "host:port"},
		{name: "bad port", cfg: func(c *Config) { c.Brokers = []string{"kafka:99999"} }, wantField: "brokers", wantMsg: "1 to 65535"},
		{name: "cert without key", cfg: func(c *Config) { c.TLS = TLS{Enabled: true, CertFile: "c.pem"} }, wantField: "tls.key_file", wantMsg: "go together"},
		{name: "bad mechanism", cfg: func(c *Config) { c.SASL = &SASL{Mechanism: "GSSAPI", Username: "u", Password: "p"} }, wantField: "sasl.mechanism", wantMsg: "want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"},
		{name: "no password", cfg: func(c *Config) { c.SASL = &SASL{Mechanism: "PLAIN", Username: "u"} }, wantField: "sasl.password", wantMsg: "${KAFKA_PASSWORD}"},
		{name: "no user", cfg: func(c *Config) { c.SASL = &SASL{Mechanism: "PLAIN", Password: "p"} }, wantField: "sasl.username", wantMsg: "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.cfg(&c)
			err := c.Validate()
			if tt.wantField == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var fe *connector.FieldError
			if !errors.As(err, &fe) || fe.Field != tt.wantField || !strings.Contains(fe.Msg, tt.wantMsg) {
				t.Fatalf("err = %v, want a FieldError on %s containing %q", err, tt.wantField, tt.wantMsg)
			}
		})
	}
}

func TestMechanism(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"PLAIN", "PLAIN"}, {"plain", "PLAIN"}, {"SCRAM-SHA-256", "SCRAM-SHA-256"}, {"scram-sha-512", "SCRAM-SHA-512"},
	} {
		c := Config{Brokers: []string{"a:1"}, SASL: &SASL{Mechanism: tt.in, Username: "u", Password: "pw"}}
		d, err := c.Dialer()
		if err != nil {
			t.Fatal(err)
		}
		tr, err := c.Transport()
		if err != nil {
			t.Fatal(err)
		}
		if d.SASLMechanism.Name() != tt.want || tr.SASL.Name() != tt.want {
			t.Errorf("%s: dialer %s, transport %s, want %s", tt.in, d.SASLMechanism.Name(), tr.SASL.Name(), tt.want)
		}
	}
	d, err := Config{Brokers: []string{"a:1"}}.Dialer()
	if err != nil || d.SASLMechanism != nil || d.TLS != nil || d.ClientID != DefaultClientID || d.Timeout != DefaultDialTimeout {
		t.Errorf("plain dialer = %+v, %v", d, err)
	}
}

func TestRedaction(t *testing.T) {
	const pw = "hunter2-secret"
	c := Config{Brokers: []string{"a:1"}, SASL: &SASL{Mechanism: "SCRAM-SHA-512", Username: "etl", Password: pw}}
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("kafka", "config", c, "sasl", c.SASL, "pw", c.SASL.Password)
	slog.New(slog.NewTextHandler(&logs, nil)).Info("kafka", "config", c, "sasl", *c.SASL)
	outputs := map[string]string{
		"String": c.String(),
		"%v":     fmt.Sprintf("%v", c),
		"%+v":    fmt.Sprintf("%+v", c),
		"%#v":    fmt.Sprintf("%#v", c),
		"%s":     fmt.Sprintf("%s", c),
		"%q":     fmt.Sprintf("%q", c),
		"sasl":   fmt.Sprintf("%v %+v %#v", c.SASL, *c.SASL, *c.SASL),
		"slog":   logs.String(),
	}
	for name, out := range outputs {
		if strings.Contains(out, pw) {
			t.Errorf("%s shows the password: %s", name, out)
		}
	}
	if !strings.Contains(c.String(), "password=***") || !strings.Contains(c.String(), "user=etl") {
		t.Errorf("String = %q", c.String())
	}
	if !strings.Contains(logs.String(), `"user":"etl"`) {
		t.Errorf("slog output lacks the user: %s", logs.String())
	}
	// Bad credentials must not echo the password in the error.
	bad := Config{Brokers: []string{"a:1"}, SASL: &SASL{Mechanism: "SCRAM-SHA-256", Username: "u", Password: "\u0007" + pw}}
	if _, err := bad.Dialer(); err != nil && strings.Contains(err.Error(), pw) {
		t.Errorf("error shows the password: %v", err)
	}
}

// pki is a throwaway CA with a server and a client certificate, as PEM
// files in a test directory.
type pki struct {
	caFile, serverCert, serverKey, clientCert, clientKey string
	caPool                                               *x509.CertPool
}

func newPKI(t *testing.T) pki {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "etld test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	p := pki{caPool: x509.NewCertPool()}
	p.caPool.AddCert(caCert)
	p.caFile = writePEM(t, dir, "ca.pem", "CERTIFICATE", caDER)
	leaf := func(name string, serial int64, usage x509.ExtKeyUsage) (string, string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: name},
			DNSNames:     []string{name},
			NotBefore:    time.Now().Add(-time.Hour),
			NotAfter:     time.Now().Add(time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return writePEM(t, dir, name+".pem", "CERTIFICATE", der), writePEM(t, dir, name+".key", "EC PRIVATE KEY", keyDER)
	}
	p.serverCert, p.serverKey = leaf("kafka.test", 2, x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey = leaf("etld-client", 3, x509.ExtKeyUsageClientAuth)
	return p
}

func writePEM(t *testing.T, dir, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTLSHandshake proves the files are read into a configuration that
// trusts the CA, presents the client certificate and checks the server
// name: a mutual-TLS handshake with a server on loopback.
func TestTLSHandshake(t *testing.T) {
	p := newPKI(t)
	serverCert, err := tls.LoadX509KeyPair(p.serverCert, p.serverKey)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{serverCert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    p.caPool,
		MinVersion:   tls.VersionTLS12,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			// Finish the handshake from the server side, then hang up.
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()

	handshake := func(tc TLS) error {
		cfg, err := Config{Brokers: []string{ln.Addr().String()}, TLS: tc}.TLSConfig()
		if err != nil {
			return err
		}
		d := &net.Dialer{Timeout: 5 * time.Second}
		conn, err := tls.DialWithDialer(d, "tcp", ln.Addr().String(), cfg)
		if err != nil {
			return err
		}
		defer conn.Close()
		// TLS 1.3 reports a rejected client certificate on the first read.
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = conn.Read(make([]byte, 1))
		if err != nil && strings.Contains(err.Error(), "certificate") {
			return err
		}
		return nil
	}
	full := TLS{Enabled: true, CAFile: p.caFile, CertFile: p.clientCert, KeyFile: p.clientKey, ServerName: "kafka.test"}
	if err := handshake(full); err != nil {
		t.Fatalf("mutual TLS with the CA and client certificate: %v", err)
	}
	wrongName := full
	wrongName.ServerName = "other.test"
	if err := handshake(wrongName); err == nil {
		t.Error("a server name the certificate does not hold was accepted")
	}
	noCA := full
	noCA.CAFile = ""
	if err := handshake(noCA); err == nil {
		t.Error("the server was trusted without the test CA")
	}
	noClient := TLS{Enabled: true, CAFile: p.caFile, ServerName: "kafka.test"}
	if err := handshake(noClient); err == nil {
		t.Error("the server accepted a client without certificate")
	}

	cfg, err := Config{TLS: TLS{Enabled: true, CAFile: p.serverKey}}.TLSConfig()
	if err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("a key as CA file: %v, %v", cfg, err)
	}
	if _, err := (Config{TLS: TLS{Enabled: true, CAFile: filepath.Join(t.TempDir(), "missing.pem")}}).TLSConfig(); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "tls.ca_file") {
		t.Errorf("a missing CA file: %v", err)
	}
	if cfg, err := (Config{TLS: TLS{CAFile: p.caFile}}).TLSConfig(); cfg != nil || err != nil {
		t.Errorf("TLS off gave %v, %v", cfg, err)
	}
	d, err := Config{Brokers: []string{"a:1"}, TLS: full}.Dialer()
	if err != nil || d.TLS == nil || len(d.TLS.Certificates) != 1 || d.TLS.ServerName != "kafka.test" {
		t.Errorf("dialer TLS = %+v, %v", d.TLS, err)
	}
}
