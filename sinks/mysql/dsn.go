package mysql

import (
	"net"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/etld/etld/internal/mysqlconn"
	"github.com/etld/etld/pipeline/connector"
)

// driverConfig turns the connection options into a go-sql-driver config:
// dsn as is, or url (jdbc:mysql://host:port/db) translated, then username
// and password over either. It never puts the password into an error.
func driverConfig(cfg Config) (*mysql.Config, error) {
	var dc *mysql.Config
	switch {
	case cfg.DSN != "" && cfg.URL != "":
		return nil, connector.Errorf("url", "give either dsn or url, not both")
	case cfg.DSN != "":
		c, err := mysql.ParseDSN(cfg.DSN)
		if err != nil {
			return nil, connector.Errorf("dsn", "%s (want user:password@tcp(host:port)/database)", mysqlconn.Scrub(err.Error(), cfg.DSN))
		}
		dc = c
	case cfg.URL != "":
		c, err := mysqlconn.FromJDBC(cfg.URL)
		if err != nil {
			return nil, connector.Errorf("url", "%s", mysqlconn.Scrub(err.Error(), cfg.URL))
		}
		dc = c
	default:
		return nil, connector.Errorf("dsn", "missing: give dsn (user:password@tcp(host:port)/database) or url (jdbc:mysql://host:port/database)")
	}
	if cfg.Username != "" {
		dc.User = cfg.Username
	}
	if cfg.Password != "" {
		dc.Passwd = cfg.Password
	}
	field := "dsn"
	if cfg.URL != "" {
		field = "url"
	}
	if dc.DBName == "" {
		return nil, connector.Errorf(field, "names no database: the table is looked up in the connection's database (.../database)")
	}
	if dc.Net == "tcp" {
		// The driver takes any port text and fails only when it dials.
		if _, port, err := net.SplitHostPort(dc.Addr); err == nil {
			if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
				return nil, connector.Errorf(field, "port %q of %s is not a number from 1 to 65535", port, mysqlconn.Redact(dc))
			}
		}
	}
	if dc.Params == nil {
		dc.Params = map[string]string{}
	}
	// Strict mode for this session: without it MySQL truncates a too-long
	// value with a warning and the row is stored wrong, silently. With it
	// the row fails with an error number and goes to on_error.
	if _, ok := dc.Params["sql_mode"]; !ok {
		dc.Params["sql_mode"] = "CONCAT(@@sql_mode, ',STRICT_ALL_TABLES')"
	}
	// TIMESTAMP_LTZ values are instants written in UTC; a MySQL TIMESTAMP
	// column converts from the session's zone, so the session speaks UTC.
	if _, ok := dc.Params["time_zone"]; !ok {
		dc.Params["time_zone"] = "'+00:00'"
	}
	// time.Time parameters are formatted in Loc: UTC keeps a TIMESTAMP's
	// wall clock and an LTZ's UTC instant as they are.
	dc.Loc = time.UTC
	if dc.Timeout == 0 {
		dc.Timeout = 10 * time.Second
	}
	return dc, nil
}
