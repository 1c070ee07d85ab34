package pgconf

import (
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestParseTable(t *testing.T) {
	for in, want := range map[string]string{
		"orders":            `"public"."orders"`,
		"shop.orders":       `"shop"."orders"`,
		"Shop.Orders":       `"Shop"."Orders"`,
		`"my.schema"."t"`:   `"my.schema"."t"`,
		`"a""b".c`:          `"a""b"."c"`,
		`s."x.y"`:           `"s"."x.y"`,
		`"only one"`:        `"public"."only one"`,
		"with$dollar.t_1":   `"with$dollar"."t_1"`,
		"snake_case.Mixed1": `"snake_case"."Mixed1"`,
	} {
		got, err := ParseTable(in)
		if err != nil || got.Quoted() != want {
			t.Errorf("ParseTable(%q) = %s, %v; want %s", in, got.Quoted(), err, want)
		}
	}
	for _, in := range []string{"", "a.b.c", `"open`, "a..b", `a"b`, ".t", "t.", `"x"y`} {
		if got, err := ParseTable(in); err == nil {
			t.Errorf("ParseTable(%q) = %s, want an error", in, got.Quoted())
		}
	}
	if got := (Table{Schema: "public", Name: "Orders"}).String(); got != `public."Orders"` {
		t.Errorf("String() = %s", got)
	}
}

func TestFromJDBC(t *testing.T) {
	for in, want := range map[string]string{
		"jdbc:postgresql://db:5433/shop":                                   "postgres://db:5433/shop",
		"jdbc:postgresql://db/shop?user=u&password=p%40ss&sslmode=require": "postgres://u:p%40ss@db:5432/shop?sslmode=require",
		"jdbc:postgresql://[::1]:5432/shop?currentSchema=x":                "postgres://[::1]:5432/shop",
	} {
		got, err := FromJDBC(in)
		if err != nil || got != want {
			t.Errorf("FromJDBC(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"postgresql://db/shop", "jdbc:mysql://db/shop", "jdbc:postgresql:///shop", "jdbc:postgresql://db:99999/shop"} {
		if _, err := FromJDBC(in); err == nil {
			t.Errorf("FromJDBC(%q): want an error", in)
		}
	}
}

// TestConfigKeepsPasswordsOut: errors about a connection string never
// show its password, in either form.
func TestConfigKeepsPasswordsOut(t *testing.T) {
	for _, o := range []Options{
		{DSN: "postgres://u:s3cretpw@host:notaport/db"},
		{DSN: "host=h port=x password=s3cretpw dbname=d"},
		{URL: "jdbc:postgresql://h:70000/db?password=s3cretpw"},
		{DSN: "postgres://u:s3cretpw@h/"},
	} {
		_, err := Config(o)
		if err == nil {
			t.Errorf("Config(%+v): want an error", o)
			continue
		}
		if strings.Contains(err.Error(), "s3cretpw") {
			t.Errorf("Config: %v shows the password", err)
		}
	}
	c, err := Config(Options{URL: "jdbc:postgresql://h/db?user=u", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	if c.User != "u" || c.Password != "pw" || c.RuntimeParams["TimeZone"] != "UTC" || Redact(c) != "u@h:5432/db" || JDBCURL(c) != "jdbc:postgresql://h:5432/db" {
		t.Errorf("Config: user %q password %q params %v, shown as %s / %s", c.User, c.Password, c.RuntimeParams, Redact(c), JDBCURL(c))
	}
}

func TestClassify(t *testing.T) {
	for code, want := range map[string]Class{
		"08006": Transient, "40P01": Transient, "57P01": Transient, "53300": Transient, "55P03": Transient,
		"22001": RowLevel, "23505": RowLevel, "22P02": RowLevel,
		"42P01": Fatal, "42501": Fatal, "28P01": Fatal,
	} {
		if got := Classify(&pgconn.PgError{Code: code}); got != want {
			t.Errorf("Classify(%s) = %d, want %d", code, got, want)
		}
	}
	if Classify(errors.New("connection reset")) != Transient {
		t.Error("a network error is not transient")
	}
}
