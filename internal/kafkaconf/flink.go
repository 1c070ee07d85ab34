package kafkaconf

import (
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/connector"
)

// Flink adds the client options to a Flink kafka or upsert-kafka table:
// the bootstrap servers, TLS and SASL as Kafka client properties
// (properties.*), which Flink hands to its Kafka client unchanged.
func (c Config) Flink(t *connector.FlinkTable) {
	t.Set("properties.bootstrap.servers", strings.Join(c.Addrs(), ","), "brokers")
	if c.ClientID != "" {
		t.Set("properties.client.id", c.ClientID, "client_id")
	}
	protocol := ""
	switch {
	case c.TLS.Enabled && c.SASL != nil:
		protocol = "SASL_SSL"
	case c.TLS.Enabled:
		protocol = "SSL"
	case c.SASL != nil:
		protocol = "SASL_PLAINTEXT"
	}
	if protocol != "" {
		t.Set("properties.security.protocol", protocol, "tls")
	}
	if c.TLS.Enabled {
		if c.TLS.CAFile != "" {
			t.Set("properties.ssl.truststore.type", "PEM", "tls.ca_file")
			t.Set("properties.ssl.truststore.location", c.TLS.CAFile, "tls.ca_file")
		}
		if c.TLS.CertFile != "" || c.TLS.KeyFile != "" {
			t.Differ("tls.cert_file", "Kafka's Java client takes a client certificate from a keystore (properties.ssl.keystore.*), not from PEM files: set them by hand")
		}
		if c.TLS.InsecureSkipVerify {
			t.Set("properties.ssl.endpoint.identification.algorithm", "", "tls.insecure_skip_verify")
			t.Differ("tls.insecure_skip_verify", "the Java client still checks the server's certificate chain; only the host name check is turned off")
		}
	}
	if s := c.SASL; s != nil {
		mech := strings.ToUpper(s.Mechanism)
		module := "org.apache.kafka.common.security.plain.PlainLoginModule"
		if strings.HasPrefix(mech, "SCRAM") {
			module = "org.apache.kafka.common.security.scram.ScramLoginModule"
		}
		t.Set("properties.sasl.mechanism", mech, "sasl.mechanism")
		t.Set("properties.sasl.jaas.config", fmt.Sprintf(`%s required username="%s" password="%s";`, module, s.Username, string(s.Password)), "sasl.password")
	}
	if c.DialTimeout != 0 {
		t.Set("properties.socket.connection.setup.timeout.ms", fmt.Sprint(c.DialTimeout.Milliseconds()), "dial_timeout")
	}
}
