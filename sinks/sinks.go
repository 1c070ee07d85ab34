// Package sinks lists every built-in sink connector.
package sinks

import (
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/sinks/blackhole"
	"github.com/etld/etld/sinks/elasticsearch"
	"github.com/etld/etld/sinks/file"
	"github.com/etld/etld/sinks/kafka"
	"github.com/etld/etld/sinks/mysql"
	"github.com/etld/etld/sinks/print"
)

// Register adds every built-in sink to r.
func Register(r *connector.Registry) {
	blackhole.Register(r)
	elasticsearch.Register(r)
	file.Register(r)
	kafka.Register(r)
	mysql.Register(r)
	print.Register(r)
}
