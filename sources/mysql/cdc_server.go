package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/etld/etld/internal/mysqlconn"
	"github.com/etld/etld/pipeline/row"
)

// serverInfo is what the binlog source learns of the server at Open.
type serverInfo struct {
	mariadb bool
	version string
	// charsets maps a collation id, as table maps give it, to its
	// character set.
	charsets map[uint64]string
}

// flavor is the server's flavor as the replication library names it.
func (si serverInfo) flavor() string {
	if si.mariadb {
		return "mariadb"
	}
	return "mysql"
}

// checkServer reads the server's version and refuses a server whose
// binary log cannot be captured: off, not row-based, without full row
// images, or without column names in its table maps.
func checkServer(ctx context.Context, db *sql.DB) (serverInfo, error) {
	var si serverInfo
	var logBin int
	if err := db.QueryRowContext(ctx, "SELECT @@version, @@log_bin").Scan(&si.version, &logBin); err != nil {
		return si, fmt.Errorf("read the server's settings: %w", err)
	}
	si.mariadb = strings.Contains(strings.ToLower(si.version), "mariadb")
	if logBin == 0 {
		return si, errors.New("the server's binary log is off (log_bin): start it with log_bin, binlog_format=ROW, binlog_row_image=FULL and binlog_row_metadata=FULL to capture changes")
	}
	var format, image string
	if err := db.QueryRowContext(ctx, "SELECT @@GLOBAL.binlog_format, @@GLOBAL.binlog_row_image").Scan(&format, &image); err != nil {
		return si, fmt.Errorf("read the server's binlog settings: %w", err)
	}
	if !strings.EqualFold(format, "ROW") {
		return si, fmt.Errorf("the server's binlog_format is %s: binlog capture needs ROW, which logs every changed row (SET GLOBAL binlog_format = ROW, and in the server's configuration)", format)
	}
	if !strings.EqualFold(image, "FULL") {
		return si, fmt.Errorf("the server's binlog_row_image is %s: binlog capture needs FULL, which logs every column before and after a change (SET GLOBAL binlog_row_image = FULL, and in the server's configuration)", image)
	}
	var meta string
	if err := db.QueryRowContext(ctx, "SELECT @@GLOBAL.binlog_row_metadata").Scan(&meta); err != nil {
		return si, fmt.Errorf("the server has no binlog_row_metadata (MySQL 8.0.1 and MariaDB 10.5 have it): binlog capture reads the column names from the binlog: %w", err)
	}
	if !strings.EqualFold(meta, "FULL") {
		return si, fmt.Errorf("the server's binlog_row_metadata is %s: binlog capture needs FULL, so that the binlog names the columns of each change (SET GLOBAL binlog_row_metadata = FULL, and in the server's configuration)", meta)
	}
	rows, err := db.QueryContext(ctx, "SELECT ID, CHARACTER_SET_NAME FROM information_schema.COLLATIONS WHERE ID IS NOT NULL")
	if err != nil {
		return si, fmt.Errorf("read the server's collations: %w", err)
	}
	defer rows.Close()
	si.charsets = map[uint64]string{}
	for rows.Next() {
		var id uint64
		var cs string
		if err := rows.Scan(&id, &cs); err != nil {
			return si, fmt.Errorf("read the server's collations: %w", err)
		}
		si.charsets[id] = strings.ToLower(cs)
	}
	return si, rows.Err()
}

// tableName is a captured table: its database and name.
type tableName struct{ db, name string }

func (t tableName) String() string { return t.db + "." + t.name }

func (t tableName) quoted() string { return mysqlconn.Quote(t.db) + "." + mysqlconn.Quote(t.name) }

// parseTables reads the tables option: "t" (in the connection's
// database) or "db.t".
func parseTables(names []string, defaultDB string) []tableName {
	out := make([]tableName, 0, len(names))
	for _, n := range names {
		if db, t, ok := strings.Cut(n, "."); ok {
			out = append(out, tableName{db, t})
		} else {
			out = append(out, tableName{defaultDB, n})
		}
	}
	return out
}

// tableInfo is a captured table as the server describes it at Open.
type tableInfo struct {
	name tableName
	// pk are the primary key's columns in order, with their types.
	pk []column
	// cols are every column by name (lower case).
	cols map[string]column
}

type column struct {
	name     string
	dataType string // int, varchar, datetime, ... (lower case)
	charset  string
	collate  string
}

// describeTable reads a table's columns and primary key; a table that
// is not there, or has no primary key, is an error.
func describeTable(ctx context.Context, db *sql.DB, t tableName) (*tableInfo, error) {
	rows, err := db.QueryContext(ctx, "SELECT COLUMN_NAME, DATA_TYPE, COALESCE(CHARACTER_SET_NAME, ''), COALESCE(COLLATION_NAME, '') FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION", t.db, t.name)
	if err != nil {
		return nil, fmt.Errorf("read the columns of %s: %w", t, err)
	}
	defer rows.Close()
	ti := &tableInfo{name: t, cols: map[string]column{}}
	for rows.Next() {
		var c column
		if err := rows.Scan(&c.name, &c.dataType, &c.charset, &c.collate); err != nil {
			return nil, fmt.Errorf("read the columns of %s: %w", t, err)
		}
		c.dataType = strings.ToLower(c.dataType)
		ti.cols[strings.ToLower(c.name)] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the columns of %s: %w", t, err)
	}
	if len(ti.cols) == 0 {
		return nil, fmt.Errorf("table %s is not there (or the user may not see it)", t)
	}
	pkRows, err := db.QueryContext(ctx, "SELECT COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND INDEX_NAME = 'PRIMARY' ORDER BY SEQ_IN_INDEX", t.db, t.name)
	if err != nil {
		return nil, fmt.Errorf("read the primary key of %s: %w", t, err)
	}
	defer pkRows.Close()
	for pkRows.Next() {
		var n string
		if err := pkRows.Scan(&n); err != nil {
			return nil, fmt.Errorf("read the primary key of %s: %w", t, err)
		}
		ti.pk = append(ti.pk, ti.cols[strings.ToLower(n)])
	}
	if err := pkRows.Err(); err != nil {
		return nil, fmt.Errorf("read the primary key of %s: %w", t, err)
	}
	if len(ti.pk) == 0 {
		return nil, fmt.Errorf("table %s has no primary key: binlog capture needs one to resume its snapshot and to tell its rows apart", t)
	}
	return ti, nil
}

// checkColumns refuses a table that lacks a column of the schema.
func (ti *tableInfo) checkColumns(schema row.Schema, physical []int) error {
	var missing []string
	for _, i := range physical {
		if _, ok := ti.cols[strings.ToLower(schema.Fields[i].Name)]; !ok {
			missing = append(missing, schema.Fields[i].Name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("table %s has no column %s of the schema", ti.name, strings.Join(missing, ", "))
	}
	return nil
}

// binlogEnd is where the server's binary log ends now.
func binlogEnd(ctx context.Context, db *sql.DB) (binlogPos, error) {
	rows, err := db.QueryContext(ctx, "SHOW MASTER STATUS")
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == 1064 {
		// MySQL 8.4 renamed it.
		rows, err = db.QueryContext(ctx, "SHOW BINARY LOG STATUS")
	}
	if err != nil {
		return binlogPos{}, fmt.Errorf("read the binlog's end (SHOW MASTER STATUS needs REPLICATION CLIENT, or BINLOG MONITOR on MariaDB): %w", err)
	}
	defer rows.Close()
	return scanLogPos(rows)
}

// scanLogPos reads the first two columns (file, position) of a SHOW
// MASTER STATUS-like result.
func scanLogPos(rows *sql.Rows) (binlogPos, error) {
	cols, err := rows.Columns()
	if err != nil {
		return binlogPos{}, err
	}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return binlogPos{}, err
		}
		return binlogPos{}, errors.New("the server shows no binary log position: is log_bin on?")
	}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return binlogPos{}, err
	}
	var p binlogPos
	p.File = string(vals[0])
	var pos uint64
	if _, err := fmt.Sscan(string(vals[1]), &pos); err != nil {
		return binlogPos{}, fmt.Errorf("binlog position %q: %w", vals[1], err)
	}
	p.Pos = uint32(pos)
	return p, nil
}

// binlogFiles lists the server's binary log files, oldest first.
func binlogFiles(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, "SHOW BINARY LOGS")
	if err != nil {
		return nil, fmt.Errorf("list the binary logs: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var files []string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		files = append(files, string(vals[0]))
	}
	return files, rows.Err()
}

// checkOnServer refuses a position whose file the server no longer has
// (purged, or another server's).
func checkOnServer(ctx context.Context, db *sql.DB, p binlogPos) error {
	files, err := binlogFiles(ctx, db)
	if err != nil {
		return err
	}
	for _, f := range files {
		if f == p.File {
			return nil
		}
	}
	oldest := "none"
	if len(files) > 0 {
		oldest = files[0]
	}
	return &purgedError{at: p, oldest: oldest}
}

// purgedError is a binlog position whose file the server no longer has.
type purgedError struct {
	at     binlogPos
	oldest string
}

func (e *purgedError) Error() string {
	return fmt.Sprintf("the binlog position %s is no longer on the server (its oldest binary log is %s): it was purged (binlog_expire_logs_seconds, expire_logs_days, PURGE BINARY LOGS) while the pipeline was behind, and the changes since are lost to it; reset the pipeline's state (etld state reset) to take a new snapshot", e.at, e.oldest)
}

// gtidAt is the server's GTID position at the binlog position p
// (MariaDB's BINLOG_GTID_POS); "" where the server cannot tell.
func gtidAt(ctx context.Context, db *sql.DB, si serverInfo, p binlogPos) string {
	if !si.mariadb {
		return ""
	}
	var g sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT BINLOG_GTID_POS(?, ?)", p.File, p.Pos).Scan(&g); err != nil {
		return ""
	}
	return g.String
}

// keyCast is the SQL expression that makes the text of a primary key
// column's value compare as the column does: numbers as numbers,
// temporal values as such, strings in the column's collation.
func keyCast(c column) string {
	switch c.dataType {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint", "year", "bit":
		return "CAST(? AS DECIMAL(65,0))"
	case "decimal", "numeric":
		return "CAST(? AS DECIMAL(65,30))"
	case "float", "double", "real":
		return "CAST(? AS DOUBLE)"
	case "date":
		return "CAST(? AS DATE)"
	case "datetime", "timestamp":
		return "CAST(? AS DATETIME(6))"
	case "time":
		return "CAST(? AS TIME(6))"
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		return "CAST(? AS BINARY)"
	}
	if c.charset != "" && c.collate != "" {
		return fmt.Sprintf("CONVERT(? USING %s) COLLATE %s", c.charset, c.collate)
	}
	return "?"
}
