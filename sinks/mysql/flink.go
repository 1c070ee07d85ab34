package mysql

import (
	"fmt"
	"strings"

	"github.com/etld/etld/internal/mysqlconn"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// FlinkSink implements connector.FlinkSink: Flink's jdbc connector with
// the MySQL driver. In upsert mode Flink writes, as etld does, INSERT ...
// ON DUPLICATE KEY UPDATE and deletes by key.
func (s *Sink) FlinkSink(in connector.SinkInput) (connector.FlinkTable, error) {
	var t connector.FlinkTable
	field := "dsn"
	if s.given.URL != "" {
		field = "url"
	}
	u, params := mysqlconn.JDBCURL(s.dc)
	if len(params) > 0 {
		t.Differ(field, "the driver parameters %s are go-sql-driver's, left out of the JDBC url: add MySQL Connector/J's equivalents by hand", strings.Join(params, ", "))
	}
	t.Set("connector", "jdbc", "")
	t.Set("url", u, field)
	t.Set("table-name", s.table, "table")
	userField, passField := field, field
	if s.given.Username != "" {
		userField = "username"
	}
	if s.given.Password != "" {
		passField = "password"
	}
	if s.dc.User != "" {
		t.Set("username", s.dc.User, userField)
	}
	if s.dc.Passwd != "" {
		t.Set("password", s.dc.Passwd, passField)
	}
	if s.given.BatchSize != 0 {
		t.Set("sink.buffer-flush.max-rows", fmt.Sprint(s.batchSize), "batch_size")
	}
	if s.interval != 0 {
		t.Set("sink.buffer-flush.interval", connector.FlinkDuration(s.interval), "flush_interval")
	}
	if s.given.Parallelism > 1 {
		t.Set("sink.parallelism", fmt.Sprint(s.given.Parallelism), "parallelism")
	}
	if s.given.MaxRetries != 0 {
		t.Set("sink.max-retries", fmt.Sprint(s.given.MaxRetries), "max_retries")
	}
	// Flink's jdbc connector converts no TIMESTAMP_LTZ: the table takes
	// the UTC wall clock as TIMESTAMP, which is what etld writes.
	for i, f := range in.Schema.Fields {
		if f.Type.ID != row.TimestampLTZ {
			continue
		}
		if t.Types == nil {
			t.Types = make([]row.Type, in.Schema.Len())
			for j, g := range in.Schema.Fields {
				t.Types[j] = g.Type
			}
		}
		t.Types[i].ID = row.Timestamp
		t.Differ("", "Flink's jdbc connector cannot write TIMESTAMP_LTZ: the table declares %s TIMESTAMP(%d) and the INSERT casts it in the session time zone UTC, the value etld writes", f.Name, f.Type.Precision)
	}
	if s.createTable || s.replace {
		ddl, err := s.createDDL()
		if err != nil {
			return t, err
		}
		t.Differ("create_table", "Flink's jdbc connector does not create the table: create it before the job starts, as etld would: %s", ddl)
	}
	return t, nil
}

var _ connector.FlinkSink = (*Sink)(nil)
