package elasticsearch

import (
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/connector"
)

// FlinkSink implements connector.FlinkSink: Flink's elasticsearch-7
// connector. Its document ids are etld's: the key's values joined by
// document-id.key-delimiter in upsert mode, generated in append mode.
func (s *Sink) FlinkSink(in connector.SinkInput) (connector.FlinkTable, error) {
	var t connector.FlinkTable
	c, given := s.cfg, s.given
	t.Set("connector", "elasticsearch-7", "")
	t.Set("hosts", strings.Join(c.hosts, ";"), "hosts")
	t.Set("index", given.Index, "index")
	if given.KeyDelimiter != nil {
		t.Set("document-id.key-delimiter", c.delimiter, "key_delimiter")
	}
	if given.KeyNullLiteral != nil {
		t.Differ("key_null_literal", "Flink writes a NULL key column as the text null in the document id; key_null_literal is etld's")
	}
	if given.BulkFlushMaxActions != nil {
		t.Set("sink.bulk-flush.max-actions", fmt.Sprint(c.maxActions), "bulk_flush_max_actions")
	}
	if given.BulkFlushMaxSize != "" {
		t.Set("sink.bulk-flush.max-size", fmt.Sprintf("%dkb", c.maxSize>>10), "bulk_flush_max_size")
	}
	if given.BulkFlushInterval != nil {
		t.Set("sink.bulk-flush.interval", connector.FlinkDuration(c.interval), "bulk_flush_interval")
	}
	if given.BackoffStrategy != "" {
		t.Set("sink.bulk-flush.backoff.strategy", strings.ToUpper(given.BackoffStrategy), "bulk_flush_backoff_strategy")
	}
	if given.BackoffMaxRetries != 0 {
		t.Set("sink.bulk-flush.backoff.max-retries", fmt.Sprint(given.BackoffMaxRetries), "bulk_flush_backoff_max_retries")
	}
	if given.BackoffDelay != nil {
		t.Set("sink.bulk-flush.backoff.delay", connector.FlinkDuration(*given.BackoffDelay), "bulk_flush_backoff_delay")
	}
	if c.username != "" {
		t.Set("username", c.username, "username")
		t.Set("password", c.password, "password")
	}
	if c.apiKey != "" {
		t.Differ("api_key", "Flink's elasticsearch-7 connector authenticates with username and password only; the script has no API key and the cluster will refuse it")
	}
	if c.caFile != "" {
		t.Differ("ca_file", "Flink's elasticsearch-7 connector has no option for a CA file: import it into the JVM's trust store (javax.net.ssl.trustStore)")
	}
	if given.ConnectionTimeout != nil {
		t.Set("connection.timeout", connector.FlinkDuration(*given.ConnectionTimeout), "connection_timeout")
	}
	if given.SocketTimeout != nil {
		t.Set("socket.timeout", connector.FlinkDuration(*given.SocketTimeout), "socket_timeout")
	}
	if given.Parallelism != 0 {
		t.Set("sink.parallelism", fmt.Sprint(given.Parallelism), "parallelism")
	}
	return t, nil
}

var _ connector.FlinkSink = (*Sink)(nil)
