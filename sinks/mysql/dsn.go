package mysql

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

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
			return nil, connector.Errorf("dsn", "%s (want user:password@tcp(host:port)/database)", scrub(err.Error(), cfg.DSN))
		}
		dc = c
	case cfg.URL != "":
		c, err := fromJDBC(cfg.URL)
		if err != nil {
			return nil, connector.Errorf("url", "%s", scrub(err.Error(), cfg.URL))
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
				return nil, connector.Errorf(field, "port %q of %s is not a number from 1 to 65535", port, redact(dc))
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

// fromJDBC reads Flink's JDBC url, jdbc:mysql://host[:port]/database
// [?user=..&password=..], into a driver config. Other JDBC properties
// (useSSL, serverTimezone, ...) have no meaning here and are ignored.
func fromJDBC(raw string) (*mysql.Config, error) {
	rest, ok := strings.CutPrefix(raw, "jdbc:")
	if !ok {
		return nil, fmt.Errorf("want jdbc:mysql://host:port/database")
	}
	u, err := url.Parse(rest)
	if err != nil {
		return nil, fmt.Errorf("not a URL: want jdbc:mysql://host:port/database")
	}
	if u.Scheme != "mysql" && u.Scheme != "mariadb" {
		return nil, fmt.Errorf("scheme %q: want jdbc:mysql://host:port/database", u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("no host: want jdbc:mysql://host:port/database")
	}
	port := u.Port()
	if port == "" {
		port = "3306"
	}
	c := mysql.NewConfig()
	c.Net = "tcp"
	c.Addr = net.JoinHostPort(u.Hostname(), port)
	c.DBName = strings.TrimPrefix(u.Path, "/")
	if u.User != nil {
		c.User = u.User.Username()
		c.Passwd, _ = u.User.Password()
	}
	q := u.Query()
	if v := q.Get("user"); v != "" {
		c.User = v
	}
	if v := q.Get("password"); v != "" {
		c.Passwd = v
	}
	return c, nil
}

// redact renders a driver config for logs and errors: user, address and
// database, never the password or the parameters.
func redact(c *mysql.Config) string {
	return fmt.Sprintf("%s@%s(%s)/%s", c.User, c.Net, c.Addr, c.DBName)
}

// scrub removes the password of the connection string s from msg, for the
// driver's DSN parse errors: a DSN that does not parse cannot be redacted
// with ParseDSN.
func scrub(msg, s string) string {
	at := strings.LastIndex(s, "@")
	if at < 0 {
		return msg
	}
	userinfo := s[:at]
	if i := strings.LastIndex(userinfo, "//"); i >= 0 {
		userinfo = userinfo[i+2:]
	}
	_, pw, ok := strings.Cut(userinfo, ":")
	if !ok || pw == "" {
		return msg
	}
	return strings.ReplaceAll(msg, pw, "xxxxx")
}
