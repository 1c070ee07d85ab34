package postgres

import (
	"fmt"

	"github.com/etld/etld/internal/pgconf"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// FlinkSink implements connector.FlinkSink: Flink's jdbc connector with
// the PostgreSQL driver. In upsert mode Flink writes, as etld does,
// INSERT ... ON CONFLICT DO UPDATE and deletes by key.
func (s *Sink) FlinkSink(in connector.SinkInput) (connector.FlinkTable, error) {
	var t connector.FlinkTable
	field := "dsn"
	if s.given.URL != "" {
		field = "url"
	}
	t.Set("connector", "jdbc", "")
	t.Set("url", pgconf.JDBCURL(s.cc), field)
	name := s.table.Name
	if s.table.Schema != "public" {
		name = s.table.Schema + "." + s.table.Name
	}
	t.Set("table-name", name, "table")
	if s.table.String() != s.table.Schema+"."+s.table.Name {
		t.Differ("table", "Flink's PostgreSQL dialect leaves the table name unquoted, so PostgreSQL folds it to lower case; etld writes the table %s as the catalog names it", s.table)
	}
	userField, passField := field, field
	if s.given.Username != "" {
		userField = "username"
	}
	if s.given.Password != "" {
		passField = "password"
	}
	if s.cc.User != "" {
		t.Set("username", s.cc.User, userField)
	}
	if s.cc.Password != "" {
		t.Set("password", s.cc.Password, passField)
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
	// the UTC wall clock as TIMESTAMP, which is the instant etld writes
	// into a timestamptz in a UTC session.
	for i, f := range in.Schema.Fields {
		switch f.Type.ID {
		case row.TimestampLTZ:
			if t.Types == nil {
				t.Types = make([]row.Type, in.Schema.Len())
				for j, g := range in.Schema.Fields {
					t.Types[j] = g.Type
				}
			}
			t.Types[i].ID = row.Timestamp
			t.Differ("", "Flink's jdbc connector cannot write TIMESTAMP_LTZ: the table declares %s TIMESTAMP(%d) and the INSERT casts it in the session time zone UTC, the value etld writes", f.Name, f.Type.Precision)
		case row.Map, row.Struct:
			t.Differ("", "Flink's PostgreSQL dialect cannot write %s %s; etld writes it as JSON into a json or jsonb column", f.Name, f.Type)
		}
	}
	if s.createTable {
		ddl, err := s.createDDL()
		if err != nil {
			return t, err
		}
		t.Differ("create_table", "Flink's jdbc connector does not create the table: create it before the job starts, as etld would: %s", ddl)
	}
	return t, nil
}

var _ connector.FlinkSink = (*Sink)(nil)
