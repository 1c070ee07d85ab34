// Package sinks lists every built-in sink connector.
package sinks

import (
	"errors"
	"fmt"
	"strings"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/sinks/blackhole"
	"github.com/etld/etld/sinks/elasticsearch"
	"github.com/etld/etld/sinks/file"
	"github.com/etld/etld/sinks/kafka"
	"github.com/etld/etld/sinks/mysql"
	"github.com/etld/etld/sinks/postgres"
	"github.com/etld/etld/sinks/print"
)

// Register adds every built-in sink to r.
func Register(r *connector.Registry) {
	blackhole.Register(r)
	elasticsearch.Register(r)
	file.Register(r)
	kafka.Register(r)
	mysql.Register(r)
	postgres.Register(r)
	print.Register(r)
	connector.RegisterSinkSwitch(r, "jdbc", "Flink's JDBC connector: the mysql sink for url jdbc:mysql://host:port/db (or jdbc:mariadb://), the postgres sink for jdbc:postgresql://host:port/db",
		"url", jdbcSink)
}

// jdbcSink picks the sink of a type: jdbc sink by its url's database.
func jdbcSink(url string) (string, error) {
	switch {
	case url == "":
		return "", errors.New("missing: type jdbc needs url: jdbc:mysql://host:port/database or jdbc:postgresql://host:port/database (or use type: mysql or type: postgres with dsn)")
	case strings.HasPrefix(url, "jdbc:mysql:"), strings.HasPrefix(url, "jdbc:mariadb:"):
		return "mysql", nil
	case strings.HasPrefix(url, "jdbc:postgresql:"):
		return "postgres", nil
	}
	// Only the scheme (jdbc:oracle): the rest may hold a password.
	parts := strings.SplitN(url, ":", 3)
	scheme := parts[0]
	if len(parts) > 1 {
		scheme += ":" + parts[1]
	}
	return "", fmt.Errorf("%s: type jdbc writes to MySQL or MariaDB (jdbc:mysql://host:port/database) and PostgreSQL (jdbc:postgresql://host:port/database)", scheme)
}
