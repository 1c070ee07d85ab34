// Package sources lists every built-in source connector.
package sources

import (
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/sources/datagen"
	"github.com/etld/etld/sources/file"
	"github.com/etld/etld/sources/kafka"
	"github.com/etld/etld/sources/mysql"
	"github.com/etld/etld/sources/nexmark"
	"github.com/etld/etld/sources/postgres"
)

// Register adds every built-in source to r.
func Register(r *connector.Registry) {
	datagen.Register(r)
	file.Register(r)
	kafka.Register(r)
	mysql.Register(r)
	nexmark.Register(r)
	postgres.Register(r)
}
