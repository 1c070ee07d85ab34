package postgres

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/etld/etld/internal/pgconf"
	"github.com/etld/etld/pipeline/connector"
)

// FlinkSource implements connector.FlinkSource: Flink CDC's postgres-cdc
// connector (a jar of the Flink CDC project, not of Flink's distribution)
// on the same slot and publication, with the same startup mode. Its
// metadata columns table_name, schema_name, database_name and op_ts are
// etld's; lsn and row_key, and the several-tables form (one ROW column a
// table), have no counterpart there.
func (s *Source) FlinkSource() (connector.FlinkTable, error) {
	var t connector.FlinkTable
	var errs []error
	if len(s.cfg.Tables) > 0 {
		errs = append(errs, connector.Errorf("tables", "Flink CDC's postgres-cdc table reads one table's columns, not one ROW column per table: write one source per table to export it"))
	}
	for _, m := range s.build.meta {
		if m.key == metaLSN || m.key == metaRowKey {
			errs = append(errs, fmt.Errorf("metadata column %q has no Flink CDC counterpart (it offers table_name, schema_name, database_name and op_ts)", m.key))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return t, err
	}
	field := pgconf.Options{DSN: s.cfg.DSN, URL: s.cfg.URL}.Field()
	c := s.caps[0]
	t.Set("connector", "postgres-cdc", "")
	t.Set("hostname", s.cc.Host, field)
	t.Set("port", strconv.Itoa(int(s.cc.Port)), field)
	userField, passField := field, field
	if s.cfg.Username != "" {
		userField = "username"
	}
	if s.cfg.Password != "" {
		passField = "password"
	}
	t.Set("username", s.cc.User, userField)
	if s.cc.Password != "" {
		t.Set("password", s.cc.Password, passField)
	}
	t.Set("database-name", s.cc.Database, field)
	t.Set("schema-name", c.table.Schema, "table")
	t.Set("table-name", c.table.Name, "table")
	t.Set("decoding.plugin.name", "pgoutput", "")
	if s.slot != "" {
		t.Set("slot.name", s.slot, "slot")
		t.Set("debezium.publication.name", s.publication, "publication")
	}
	t.Set("scan.startup.mode", map[string]string{startupInitial: "initial", startupLatest: "latest-offset", startupSnapshot: "snapshot"}[s.startup], "startup")
	if s.upsert {
		// Flink plans the same normalization after an upsert source.
		t.Set("changelog-mode", changelogUpsert, "changelog_mode")
	}
	t.Differ("", "Flink CDC's postgres-cdc connector is not part of Flink: add its jar (flink-sql-connector-postgres-cdc) of a release for your Flink")
	if s.stop != "" {
		t.Differ("stop", "Flink CDC's postgres-cdc table does not stop at the WAL position it started at: the job runs on")
	}
	if !s.cfg.CreatePublication && s.slot != "" {
		t.Differ("publication", "Flink CDC creates the publication when it is missing (debezium.publication.autocreate.mode), where etld refuses to start without create_publication: true")
	}
	return t, nil
}

var _ connector.FlinkSource = (*Source)(nil)
