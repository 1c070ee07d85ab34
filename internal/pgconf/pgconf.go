// Package pgconf holds what the PostgreSQL connectors share about a
// connection: the connection options (dsn or Flink's JDBC url, username,
// password) turned into a pgx config with the session settings etld
// reads and writes values in, the connection shown without its password,
// table names and identifiers, and which server errors are worth a
// retry. Connectors never import each other; the sink (sinks/postgres)
// and the CDC source (sources/postgres) both connect through it.
package pgconf

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Options are the connection options of a PostgreSQL connector, as
// written.
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

// Session are the settings every etld session runs with, whatever the
// connection string says: values are written and read as text in these
// forms (timestamps with a zone in UTC, ISO dates, floats exact).
var Session = map[string]string{
	"TimeZone":           "UTC",
	"DateStyle":          "ISO, YMD",
	"IntervalStyle":      "postgres",
	"extra_float_digits": "3",
	"bytea_output":       "hex",
}

// Config turns the options into a pgx config: dsn (a postgres:// URL or
// key=value pairs, as libpq takes them) as is, or url
// (jdbc:postgresql://host:port/database) translated, then username and
// password over either, and the Session settings. It never puts the
// password into an error.
func Config(o Options) (*pgx.ConnConfig, error) {
	var conn string
	switch {
	case o.DSN != "" && o.URL != "":
		return nil, fieldErr("url", "give either dsn or url, not both")
	case o.DSN != "":
		conn = o.DSN
	case o.URL != "":
		c, err := FromJDBC(o.URL)
		if err != nil {
			return nil, fieldErr("url", "%s", Scrub(err.Error(), o.URL))
		}
		conn = c
	default:
		return nil, fieldErr("dsn", "missing: give dsn (postgres://user:password@host:port/database) or url (jdbc:postgresql://host:port/database)")
	}
	field := o.Field()
	cfg, err := pgx.ParseConfig(conn)
	if err != nil {
		return nil, fieldErr(field, "%s (want postgres://user:password@host:port/database)", Scrub(err.Error(), conn))
	}
	if o.Username != "" {
		cfg.User = o.Username
	}
	if o.Password != "" {
		cfg.Password = o.Password
	}
	if cfg.Database == "" {
		return nil, fieldErr(field, "names no database: the table is looked up in the connection's database (.../database)")
	}
	for k, v := range Session {
		cfg.RuntimeParams[k] = v
	}
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "etld"
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	return cfg, nil
}

// FromJDBC reads Flink's JDBC url, jdbc:postgresql://host[:port]/database
// [?user=..&password=..&sslmode=..], into a connection URL. Other JDBC
// properties (currentSchema, ssl, ...) have no meaning here and are
// ignored.
func FromJDBC(raw string) (string, error) {
	rest, ok := strings.CutPrefix(raw, "jdbc:")
	if !ok {
		return "", fmt.Errorf("want jdbc:postgresql://host:port/database")
	}
	u, err := url.Parse(rest)
	if err != nil {
		return "", fmt.Errorf("not a URL: want jdbc:postgresql://host:port/database")
	}
	if u.Scheme != "postgresql" {
		return "", fmt.Errorf("scheme %q: want jdbc:postgresql://host:port/database", u.Scheme)
	}
	if u.Hostname() == "" {
		return "", fmt.Errorf("no host: want jdbc:postgresql://host:port/database")
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return "", fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	out := url.URL{Scheme: "postgres", Host: net.JoinHostPort(u.Hostname(), port), Path: u.Path}
	q := u.Query()
	user, password := q.Get("user"), q.Get("password")
	if u.User != nil {
		if user == "" {
			user = u.User.Username()
		}
		if p, ok := u.User.Password(); ok && password == "" {
			password = p
		}
	}
	switch {
	case user != "" && password != "":
		out.User = url.UserPassword(user, password)
	case user != "":
		out.User = url.User(user)
	}
	if v := q.Get("sslmode"); v != "" {
		out.RawQuery = url.Values{"sslmode": {v}}.Encode()
	}
	return out.String(), nil
}

// JDBCURL is the connection as Flink's jdbc connector names it,
// jdbc:postgresql://host:port/database.
func JDBCURL(c *pgx.ConnConfig) string {
	return "jdbc:postgresql://" + net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port))) + "/" + c.Database
}

// Redact renders a connection for logs and errors: user, address and
// database, never the password or the parameters.
func Redact(c *pgx.ConnConfig) string {
	return fmt.Sprintf("%s@%s/%s", c.User, net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port))), c.Database)
}

// Scrub removes the password of the connection string s from msg, for
// errors about a connection string that does not parse (and so cannot
// be redacted by its fields): a URL's user info, or a password=...
// pair.
func Scrub(msg, s string) string {
	var pws []string
	if at := strings.LastIndex(s, "@"); at >= 0 {
		userinfo := s[:at]
		if i := strings.LastIndex(userinfo, "//"); i >= 0 {
			userinfo = userinfo[i+2:]
		}
		if _, pw, ok := strings.Cut(userinfo, ":"); ok && pw != "" {
			pws = append(pws, pw)
			if dec, err := url.PathUnescape(pw); err == nil && dec != pw {
				pws = append(pws, dec)
			}
		}
	}
	for _, f := range strings.Fields(s) {
		if pw, ok := strings.CutPrefix(f, "password="); ok && pw != "" {
			pws = append(pws, strings.Trim(pw, "'"))
		}
	}
	if i := strings.Index(s, "password="); i >= 0 && strings.Contains(s, "://") {
		pw := s[i+len("password="):]
		if j := strings.IndexByte(pw, '&'); j >= 0 {
			pw = pw[:j]
		}
		if pw != "" {
			pws = append(pws, pw)
		}
	}
	for _, pw := range pws {
		msg = strings.ReplaceAll(msg, pw, "xxxxx")
	}
	return msg
}

// Quote quotes a PostgreSQL identifier: double quotes around it, a
// double quote inside doubled. Values never go into SQL text; they are
// parameters or COPY data.
func Quote(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// Table is a table's schema and name, exactly as they are in the
// catalog (case included).
type Table struct {
	Schema, Name string
}

// ParseTable reads a table option: name or schema.name, each part as it
// is in the catalog, or in double quotes when it holds a dot or a double
// quote ("my.schema"."t"). Without a schema the table is in public.
func ParseTable(s string) (Table, error) {
	var parts []string
	for rest := s; ; {
		var part string
		if strings.HasPrefix(rest, `"`) {
			var b strings.Builder
			i := 1
			for {
				j := strings.IndexByte(rest[i:], '"')
				if j < 0 {
					return Table{}, fmt.Errorf("%q has a double quote that is not closed", s)
				}
				b.WriteString(rest[i : i+j])
				i += j + 1
				if i < len(rest) && rest[i] == '"' {
					b.WriteByte('"')
					i++
					continue
				}
				break
			}
			part, rest = b.String(), rest[i:]
		} else {
			j := strings.IndexByte(rest, '.')
			if j < 0 {
				j = len(rest)
			}
			part, rest = rest[:j], rest[j:]
			if strings.Contains(part, `"`) {
				return Table{}, fmt.Errorf("%q: a name with a double quote in it is written in double quotes, the quote doubled", s)
			}
		}
		if part == "" {
			return Table{}, fmt.Errorf("%q has an empty name", s)
		}
		parts = append(parts, part)
		if rest == "" {
			break
		}
		if rest[0] != '.' {
			return Table{}, fmt.Errorf("%q: want name or schema.name", s)
		}
		rest = rest[1:]
	}
	switch len(parts) {
	case 1:
		return Table{Schema: "public", Name: parts[0]}, nil
	case 2:
		return Table{Schema: parts[0], Name: parts[1]}, nil
	}
	return Table{}, fmt.Errorf("%q has %d dotted parts: want name or schema.name (a name with a dot in it goes in double quotes)", s, len(parts))
}

// Quoted is the table in SQL: "schema"."name".
func (t Table) Quoted() string { return Quote(t.Schema) + "." + Quote(t.Name) }

// String is schema.name, each part quoted only when it needs it.
func (t Table) String() string { return plain(t.Schema) + "." + plain(t.Name) }

// plain writes a name as is when it reads back the same unquoted, else
// quoted.
func plain(name string) string {
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || i > 0 && (r >= '0' && r <= '9' || r == '$')) {
			return Quote(name)
		}
	}
	if name == "" {
		return `""`
	}
	return name
}

// Class says what to do about a failed statement.
type Class uint8

const (
	// Transient: the connection or the server failed, not the
	// statement: roll back and try again after a backoff.
	Transient Class = iota
	// RowLevel: some row's data is refused for good (too long, NULL in a
	// NOT NULL column, a check or foreign key); find the rows.
	RowLevel
	// Fatal: retrying cannot help and no row is to blame (no such table,
	// access denied, syntax): stop, dropping nothing.
	Fatal
)

// transientStates are SQLSTATEs (or their two-character classes) that go
// away by themselves.
var transientStates = map[string]bool{
	"08":    true, // connection exception
	"53":    true, // insufficient resources: disk full, out of memory, too many connections
	"40001": true, // serialization failure
	"40P01": true, // deadlock detected
	"55P03": true, // lock not available (lock_timeout)
	"55006": true, // object in use: a replication slot a session that is ending still holds
	"57014": true, // query canceled (statement_timeout)
	"57P01": true, // admin shutdown
	"57P02": true, // crash shutdown
	"57P03": true, // cannot connect now: starting up, in recovery
	"57P05": true, // idle session timeout
	"58000": true, // system error
	"58030": true, // I/O error
	"25006": true, // read-only transaction: a standby during a failover
}

// Classify sorts err. Errors that are not the server's (network errors,
// a connection that closed) are transient: the connection is what
// failed, not the statement. The end of the caller's context is fatal.
func Classify(err error) Class {
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe):
		switch {
		case transientStates[pe.Code], len(pe.Code) == 5 && transientStates[pe.Code[:2]]:
			return Transient
		case strings.HasPrefix(pe.Code, "22"), strings.HasPrefix(pe.Code, "23"), pe.Code == "54000":
			return RowLevel
		}
		return Fatal
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return Fatal
	}
	return Transient
}
