package daemon

import "github.com/etld/etld/internal/redact"

// redactStatus hides the secrets in every string of a status: errors, and
// names too, since /metrics puts them in labels and a name may come from
// ${VAR}. /pipelines, /readyz and /metrics all read Status, so this is the
// one place the admin server's answers are redacted.
func redactStatus(r *redact.Redactor, st Status) Status {
	if r == nil {
		return st
	}
	st.Name, st.File = r.String(st.Name), r.String(st.File)
	st.Error, st.ReloadError = r.String(st.Error), r.String(st.ReloadError)
	for _, list := range [][]Counter{st.Sources, st.Sinks, st.Dropped} {
		for i := range list {
			list[i].Name = r.String(list[i].Name)
			for j := range list[i].Partitions {
				list[i].Partitions[j].Partition = r.String(list[i].Partitions[j].Partition)
			}
		}
	}
	for i := range st.OperatorState {
		o := &st.OperatorState[i]
		o.Operator, o.Plan, o.Transform, o.StateID = r.String(o.Operator), r.String(o.Plan), r.String(o.Transform), r.String(o.StateID)
	}
	for i := range st.Operators {
		o := &st.Operators[i]
		o.Operator, o.Plan, o.Transform = r.String(o.Operator), r.String(o.Plan), r.String(o.Transform)
	}
	return st
}
