package crashtest

import (
	"fmt"
	"text/template"
)

// fragmentText holds the sources and sinks that several pipeline
// templates share, as named templates. A fragment is whole lines without
// the last newline: a template calls it on a line of its own. Fragments
// of sources and sinks take the scenario's env as dot, a sink's also its
// name and input, and whatever else varies, by args:
//
//	{{template "mysql sink" args . "name" "db" "from" "stats" "key" "sensor"}}
//
// The transforms stay in the scenarios: they are what each one tests.
const fragmentText = `
{{- define "readings columns"}}      - id BIGINT
      - sensor STRING
      - temp DOUBLE
{{- end}}

{{- define "event columns"}}      - id BIGINT
      - k STRING
      - v BIGINT
{{- end}}

{{- /* The file source of writeReadings's .Dir/in.csv. */}}
{{- define "readings"}}  - name: readings
    type: file
    path: {{.Dir}}/in.csv
    format: csv
    schema:
{{template "readings columns"}}
{{- end}}

{{- /* Events as CSV lines in .Dir/in.csv; args: name. */}}
{{- define "csv events"}}  - name: {{.Arg.name}}
    type: file
    path: {{.Dir}}/in.csv
    format: csv
    schema:
{{template "event columns"}}
{{- end}}

{{- /* produceEvents's topic, read to its end; the group is the round's
       (sameGroup) or the life's. */}}
{{- define "kafka events"}}  - name: events
    type: kafka
    brokers: {{.Vars.kafka}}
    topic: {{.Vars.topic}}
    group_id: {{.Vars.group}}_{{.Out}}{{.Round}}{{if groupPerLife}}_{{.Life}}{{end}}
    start: earliest
    stop: latest
    format: json
    schema:
{{template "event columns"}}
{{- end}}

{{- /* A CSV file in .Dir (args: dir instead), named by .Out and the
       suffix; args: name, from, and mode, suffix, dir, format if given. */}}
{{- define "file sink"}}  - name: {{.Arg.name}}
    from: {{.Arg.from}}
    type: file
{{- with index .Arg "mode"}}
    mode: {{.}}
{{- end}}
    path: {{or (index .Arg "dir") .Dir}}/{{.Out}}{{index .Arg "suffix"}}.csv
{{- with index .Arg "format"}}
    format: {{.}}
{{- end}}
{{- end}}

{{- /* The round's output topic, three partitions, JSON, exactly once
       unless switched off; args: name, from. */}}
{{- define "kafka sink"}}  - name: {{.Arg.name}}
    from: {{.Arg.from}}
    type: kafka
    brokers: {{.Vars.kafka}}
    topic: {{.Vars.topic}}_{{.Out}}{{.Round}}
    create_topic: true
    partitions: 3
    format: json
    exactly_once: {{exactlyOnce}}
{{- end}}

{{- /* An upsert table named by .Out; args: name, from, key (its columns). */}}
{{- define "mysql sink"}}  - name: {{.Arg.name}}
    from: {{.Arg.from}}
    type: mysql
    dsn: "{{.Vars.dsn}}"
    table: {{.Vars.table}}_{{.Out}}
    key: [{{.Arg.key}}]
    create_table: true
{{- end}}

{{- /* An index named by .Out; args: name, from, hosts. */}}
{{- define "elasticsearch sink"}}  - name: {{.Arg.name}}
    from: {{.Arg.from}}
    type: elasticsearch
    hosts: {{.Arg.hosts}}
    index: {{.Vars.index}}_{{.Out}}
{{- end}}
`

// fragment is what a fragment called through args sees: the scenario's
// env and the arguments by name.
type fragment struct {
	*env
	Arg map[string]string
}

// args pairs names with values: args . "name" "out" "from" "stats".
func args(e *env, kv ...string) (fragment, error) {
	if len(kv)%2 != 0 {
		return fragment{}, fmt.Errorf("args %q: a name without its value", kv)
	}
	f := fragment{env: e, Arg: map[string]string{}}
	for i := 0; i < len(kv); i += 2 {
		f.Arg[kv[i]] = kv[i+1]
	}
	return f, nil
}

// fragmentFuncs are the functions of the templates: args, and the Kafka
// switches, read when a template is rendered.
var fragmentFuncs = template.FuncMap{
	"args":         args,
	"groupPerLife": func() bool { return !sameGroup },
	"exactlyOnce":  func() string { return exactlyOnce },
	// workers is a life's number of workers per keyed operator: 1 for the
	// reference run (life 0), then 2, 3, 1, 2, ...
	"workers": func(life int) int { return life%3 + 1 },
}
