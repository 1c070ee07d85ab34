package print

import "github.com/etld/etld/pipeline/connector"

// FlinkSink implements connector.FlinkSink: Flink's print connector,
// whose lines etld's print sink writes the same way (+I[1, true]).
func (s *Sink) FlinkSink(connector.SinkInput) (connector.FlinkTable, error) {
	var t connector.FlinkTable
	t.Set("connector", "print", "")
	if s.given.PrintIdentifier != "" {
		t.Set("print-identifier", s.given.PrintIdentifier, "print_identifier")
	}
	if s.given.StandardError {
		t.Set("standard-error", "true", "standard_error")
	}
	return t, nil
}

var _ connector.FlinkSink = (*Sink)(nil)
