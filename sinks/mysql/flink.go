package mysql

import (
	"fmt"
	"net/url"
	"sort"

	"github.com/etld/etld/pipeline/connector"
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
	u := "jdbc:mysql://" + s.dc.Addr + "/" + s.dc.DBName
	if len(s.dc.Params) > 0 {
		keys := make([]string, 0, len(s.dc.Params))
		for k := range s.dc.Params {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		q := url.Values{}
		for _, k := range keys {
			q.Set(k, s.dc.Params[k])
		}
		u += "?" + q.Encode()
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
	if s.given.MaxRetries != 0 {
		t.Set("sink.max-retries", fmt.Sprint(s.given.MaxRetries), "max_retries")
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
