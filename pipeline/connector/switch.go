package connector

import (
	"gopkg.in/yaml.v3"

	"github.com/etld/etld/pipeline/spec"
)

// RegisterSinkSwitch adds a sink type that is one of the sink types
// already registered, picked by the value of one of its options:
// Flink's jdbc connector is the mysql sink for a jdbc:mysql:// url and
// the postgres sink for a jdbc:postgresql:// one. pick gets the option's
// value ("" when it is absent or not a scalar) and returns the type to
// build, whose constructor then reads every option; an error from pick
// is placed at the option (at the sink when it is absent).
func RegisterSinkSwitch(r *Registry, typ, summary, field string, pick func(value string) (string, error)) {
	if _, dup := r.sinks[typ]; dup {
		panic("connector: sink type registered twice: " + typ)
	}
	r.sinks[typ] = sinkEntry{summary: summary, build: func(file string, n *yaml.Node, path string, env SinkEnv) (Sink, error) {
		value := ""
		if v := valueNode(n, field); v != nil && v != n && v.Kind == yaml.ScalarNode {
			value = v.Value
		}
		target, err := pick(value)
		if err != nil {
			return nil, fieldErrors(file, n, path, &FieldError{Field: field, Msg: err.Error()})
		}
		e, ok := r.sinks[target]
		if !ok || target == typ {
			return nil, spec.List{spec.Errorf(spec.At(file, n), path, "internal error: sink type %s picks %q, which is not registered", typ, target)}
		}
		return e.build(file, n, path, env)
	}}
}
