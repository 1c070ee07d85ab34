package mysql

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"

	"github.com/etld/etld/internal/mysqlconn"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// FlinkSource implements connector.FlinkSource: Flink's jdbc connector
// with the MySQL driver, a bounded scan of the table (scan.partition.*
// and scan.fetch-size as given) and a lookup table for a lookup join
// (lookup.cache, lookup.partial-cache.*, lookup.max-retries).
func (s *Source) FlinkSource() (connector.FlinkTable, error) {
	var t connector.FlinkTable
	c := s.given
	var errs []error
	if c.Query != "" {
		errs = append(errs, connector.Errorf("query", "Flink's jdbc connector reads a table, not a query: create a view of the query in MySQL and name it in table"))
	}
	for _, f := range s.schema.Fields {
		if f.Type.ID == row.TimestampLTZ {
			errs = append(errs, fmt.Errorf("column %s is TIMESTAMP_LTZ, which Flink's jdbc connector cannot read: declare it TIMESTAMP(%d) (etld reads DATETIME and TIMESTAMP in UTC) and CAST it in the query", f.Name, f.Type.Precision))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return t, err
	}
	field := mysqlconn.Options{DSN: c.DSN, URL: c.URL}.Field()
	u, params := mysqlconn.JDBCURL(s.dc)
	if len(params) > 0 {
		t.Differ(field, "the driver parameters %s are go-sql-driver's, left out of the JDBC url: add MySQL Connector/J's equivalents by hand", strings.Join(params, ", "))
	}
	t.Set("connector", "jdbc", "")
	t.Set("url", u, field)
	t.Set("table-name", c.Table, "table")
	userField, passField := field, field
	if c.Username != "" {
		userField = "username"
	}
	if c.Password != "" {
		passField = "password"
	}
	if s.dc.User != "" {
		t.Set("username", s.dc.User, userField)
	}
	if s.dc.Passwd != "" {
		t.Set("password", s.dc.Passwd, passField)
	}
	if p := c.Scan.Partition; p.Column != "" {
		t.Set("scan.partition.column", p.Column, "scan.partition.column")
		t.Set("scan.partition.num", fmt.Sprint(p.Num), "scan.partition.num")
		t.Set("scan.partition.lower-bound", fmt.Sprint(*p.LowerBound), "scan.partition.lower_bound")
		t.Set("scan.partition.upper-bound", fmt.Sprint(*p.UpperBound), "scan.partition.upper_bound")
	}
	if c.Scan.FetchSize != 0 {
		t.Set("scan.fetch-size", fmt.Sprint(c.Scan.FetchSize), "scan.fetch_size")
	}
	s.flinkLookup(&t)
	return t, nil
}

// flinkLookup adds the lookup options, with etld's defaults where
// Flink's differ.
func (s *Source) flinkLookup(t *connector.FlinkTable) {
	lk, o := s.given.Lookup, s.LookupOptions()
	if o.Cache {
		t.Set("lookup.cache", "PARTIAL", "lookup.cache")
		// etld's max_rows default: a PARTIAL cache in Flink is bounded
		// only by what it is given.
		t.Set("lookup.partial-cache.max-rows", fmt.Sprint(o.MaxRows), "lookup.partial_cache.max_rows")
		if o.ExpireAfterWrite > 0 {
			t.Set("lookup.partial-cache.expire-after-write", connector.FlinkDuration(o.ExpireAfterWrite), "lookup.partial_cache.expire_after_write")
		}
		if o.ExpireAfterAccess > 0 {
			t.Set("lookup.partial-cache.expire-after-access", connector.FlinkDuration(o.ExpireAfterAccess), "lookup.partial_cache.expire_after_access")
		}
		t.Set("lookup.partial-cache.cache-missing-key", fmt.Sprint(o.CacheMissingKey), "lookup.partial_cache.cache_missing_key")
	}
	if lk.MaxRetries > 0 {
		t.Set("lookup.max-retries", fmt.Sprint(lk.MaxRetries), "lookup.max_retries")
	} else {
		t.LookupDifferences = append(t.LookupDifferences, connector.FlinkDifference{Field: "lookup.max_retries",
			What: "etld waits for the server as long as the pipeline runs when a lookup query fails (lookup.max_retries 0, the default); Flink's lookup fails the job after 3 retries (lookup.max-retries): set lookup.max_retries to say how many"})
	}
	if lk.BatchSize != 0 {
		t.Differ("lookup.batch_size", "Flink's jdbc lookup sends one query per key: batch_size %d has no counterpart (the rows found are the same)", lk.BatchSize)
	}
}

var _ connector.FlinkSource = (*Source)(nil)

// FlinkSource implements connector.FlinkSource for binlog capture: Flink
// CDC's mysql-cdc connector, which takes a snapshot and then reads the
// binlog as etld does, with the same metadata keys but etld's own
// binlog_file, binlog_pos and gtid.
func (s *CDC) FlinkSource() (connector.FlinkTable, error) {
	var t connector.FlinkTable
	c := s.given
	var errs []error
	for i, key := range s.meta {
		switch key {
		case metaFile, metaPos, metaGTID:
			errs = append(errs, fmt.Errorf("column %s is the metadata %q, which Flink CDC's mysql-cdc has not: drop it to export the pipeline", s.schema.Fields[i].Name, key))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return t, err
	}
	field := mysqlconn.Options{DSN: c.DSN, URL: c.URL}.Field()
	host, port, err := net.SplitHostPort(s.dc.Addr)
	if err != nil {
		return t, connector.Errorf(field, "address %s: %v", s.dc.Addr, err)
	}
	t.Set("connector", "mysql-cdc", "")
	t.Set("hostname", host, field)
	t.Set("port", port, field)
	userField, passField := field, field
	if c.Username != "" {
		userField = "username"
	}
	if c.Password != "" {
		passField = "password"
	}
	t.Set("username", s.dc.User, userField)
	t.Set("password", s.dc.Passwd, passField)
	dbs, tables := map[string]bool{}, make([]string, 0, len(s.tables))
	var dbList []string
	for _, tn := range s.tables {
		if !dbs[tn.db] {
			dbs[tn.db] = true
			dbList = append(dbList, regexp.QuoteMeta(tn.db))
		}
		tables = append(tables, regexp.QuoteMeta(tn.name))
	}
	tablesField := "tables"
	if c.Table != "" {
		tablesField = "table"
	}
	t.Set("database-name", strings.Join(dbList, "|"), tablesField)
	t.Set("table-name", strings.Join(tables, "|"), tablesField)
	if len(dbList) > 1 {
		t.Differ(tablesField, "Flink CDC matches database-name and table-name as two patterns: with tables of %d databases it also captures any table of one database named as a table of another", len(dbList))
	}
	if c.ServerID != 0 {
		t.Set("server-id", fmt.Sprint(c.ServerID), "server_id")
	}
	t.Set("server-time-zone", "UTC", "")
	t.Set("scan.startup.mode", s.startup, "scan.startup.mode")
	if off := c.Scan.Startup.SpecificOffset; s.startup == startSpecific {
		if off.File != "" {
			t.Set("scan.startup.specific-offset.file", off.File, "scan.startup.specific_offset.file")
			t.Set("scan.startup.specific-offset.pos", fmt.Sprint(off.Pos), "scan.startup.specific_offset.pos")
		} else {
			t.Set("scan.startup.specific-offset.gtid-set", off.GTIDSet, "scan.startup.specific_offset.gtid_set")
		}
	}
	if c.Scan.FetchSize != 0 {
		t.Set("scan.snapshot.fetch.size", fmt.Sprint(c.Scan.FetchSize), "scan.fetch_size")
	}
	if c.Heartbeat.Interval != 0 {
		t.Set("heartbeat.interval", connector.FlinkDuration(c.Heartbeat.Interval), "heartbeat.interval")
	}
	if strings.EqualFold(c.Stop, "latest") {
		t.Differ("stop", "Flink CDC's mysql-cdc reads the binlog without end: the job runs on past the end etld stops at (stop: latest)")
	}
	return t, nil
}

var _ connector.FlinkSource = (*CDC)(nil)
