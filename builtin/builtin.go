// Package builtin builds the registry of every connector and format etld
// ships: what the CLI runs pipelines with, and what tests that run whole
// pipelines load them with, so that both see the same set.
package builtin

import (
	"github.com/etld/etld/formats"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/sinks"
	"github.com/etld/etld/sources"
)

// Registry returns a new registry holding every built-in source, sink and
// format.
func Registry() *connector.Registry {
	r := connector.NewRegistry()
	formats.Register(r)
	sources.Register(r)
	sinks.Register(r)
	return r
}
