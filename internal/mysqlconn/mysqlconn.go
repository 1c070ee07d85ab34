// Package mysqlconn holds what the MySQL/MariaDB connectors share about a
// connection: the connection options (dsn or Flink's JDBC url, username,
// password) turned into a go-sql-driver config, the connection shown
// without its password, and which server errors are worth a retry.
// Connectors never import each other; the source (sources/mysql) reads
// its connection through this package.
package mysqlconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Options are the connection options of a MySQL connector, as written.
type Options struct {
	DSN      string `yaml:"dsn"`
	URL      string `yaml:"url"`
	Username string `yaml:"username"`
	Password string `yaml:"password"`
}

// FieldError is a complaint about one option (dsn, url); the connector
// turns it into its own option error.
type FieldError struct {
	Field, Msg string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Field is the option the connection was given by: "url" or "dsn".
func (o Options) Field() string {
	if o.URL != "" {
		return "url"
	}
	return "dsn"
}

// DriverConfig turns the options into a go-sql-driver config: dsn as is,
// or url (jdbc:mysql://host:port/db) translated, then username and
// password over either. The session speaks UTC (time_zone +00:00 unless
// the DSN sets one) and DATETIME values come back as text. It never puts
// the password into an error.
func DriverConfig(o Options) (*mysql.Config, error) {
	var dc *mysql.Config
	switch {
	case o.DSN != "" && o.URL != "":
		return nil, fieldErr("url", "give either dsn or url, not both")
	case o.DSN != "":
		c, err := mysql.ParseDSN(o.DSN)
		if err != nil {
			return nil, fieldErr("dsn", "%s (want user:password@tcp(host:port)/database)", Scrub(err.Error(), o.DSN))
		}
		dc = c
	case o.URL != "":
		c, err := FromJDBC(o.URL)
		if err != nil {
			return nil, fieldErr("url", "%s", Scrub(err.Error(), o.URL))
		}
		dc = c
	default:
		return nil, fieldErr("dsn", "missing: give dsn (user:password@tcp(host:port)/database) or url (jdbc:mysql://host:port/database)")
	}
	if o.Username != "" {
		dc.User = o.Username
	}
	if o.Password != "" {
		dc.Passwd = o.Password
	}
	field := o.Field()
	if dc.DBName == "" {
		return nil, fieldErr(field, "names no database: the table is looked up in the connection's database (.../database)")
	}
	if dc.Net == "tcp" {
		if _, port, err := net.SplitHostPort(dc.Addr); err == nil {
			if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
				return nil, fieldErr(field, "port %q of %s is not a number from 1 to 65535", port, Redact(dc))
			}
		}
	}
	if dc.Params == nil {
		dc.Params = map[string]string{}
	}
	if _, ok := dc.Params["time_zone"]; !ok {
		dc.Params["time_zone"] = "'+00:00'"
	}
	dc.Loc = time.UTC
	dc.ParseTime = false
	if dc.Timeout == 0 {
		dc.Timeout = 10 * time.Second
	}
	return dc, nil
}

// FromJDBC reads Flink's JDBC url, jdbc:mysql://host[:port]/database
// [?user=..&password=..], into a driver config. Other JDBC properties
// (useSSL, serverTimezone, ...) have no meaning here and are ignored.
func FromJDBC(raw string) (*mysql.Config, error) {
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

// JDBCURL is the connection as Flink's jdbc connector names it,
// jdbc:mysql://host:port/database, and the DSN's parameters it leaves out,
// sorted: they are go-sql-driver's (Connector/J spells its own
// otherwise), and etld sets sql_mode and time_zone itself.
func JDBCURL(c *mysql.Config) (url string, leftOut []string) {
	for k := range c.Params {
		if k != "sql_mode" && k != "time_zone" {
			leftOut = append(leftOut, k)
		}
	}
	sort.Strings(leftOut)
	return "jdbc:mysql://" + c.Addr + "/" + c.DBName, leftOut
}

// Redact renders a driver config for logs and errors: user, address and
// database, never the password or the parameters.
func Redact(c *mysql.Config) string {
	return fmt.Sprintf("%s@%s(%s)/%s", c.User, c.Net, c.Addr, c.DBName)
}

// Scrub removes the password of the connection string s from msg, for
// the driver's DSN parse errors: a DSN that does not parse cannot be
// redacted with ParseDSN.
func Scrub(msg, s string) string {
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

// TransientCodes are server errors that go away by themselves: a query
// or a write that failed with one is tried again (the MySQL sink and the
// mysql source share them).
var TransientCodes = map[uint16]bool{
	1021: true, // disk full
	1037: true, // out of memory
	1038: true, // out of sort memory
	1040: true, // too many connections
	1041: true, // out of memory
	1047: true, // unknown command / WSREP not ready (Galera)
	1053: true, // server shutdown in progress
	1114: true, // table is full
	1158: true, // network read error
	1159: true, // network read timeout
	1160: true, // network write error
	1161: true, // network write timeout
	1180: true, // error during COMMIT
	1181: true, // error during ROLLBACK
	1205: true, // lock wait timeout
	1213: true, // deadlock
	1290: true, // --read-only (a replica during failover)
	1317: true, // query interrupted
	1615: true, // prepared statement needs re-preparing
	1792: true, // read-only transaction
	1836: true, // read-only mode
	1927: true, // connection killed (MariaDB)
	1969: true, // statement timeout (MariaDB)
	2006: true, // server has gone away
	2013: true, // lost connection during query
	3024: true, // max_execution_time exceeded (MySQL)
	4031: true, // disconnected for inactivity (MySQL)
}

// Transient reports whether a failed query is worth trying again: the
// connection failed (a network error, the driver's invalid connection),
// or the server said it is away or busy. A server error about the
// query (no such table, access denied, syntax) is not; neither is the
// end of the caller's context.
func Transient(err error) bool {
	var me *mysql.MySQLError
	switch {
	case err == nil:
		return false
	case errors.As(err, &me):
		return TransientCodes[me.Number]
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	}
	return true
}

// Quote quotes a MySQL identifier with backticks.
func Quote(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}
