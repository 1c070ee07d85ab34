package plan

import (
	"strings"

	"github.com/etld/etld/pipeline/spec"
)

// report is the planner's error list, indexed by field path so that it can
// tell whether an element of the file (a source, a transform, one of their
// fields) already has an error. The planner uses that to skip checks whose
// failures would only repeat a reported problem, and to prove that every
// declared element was either planned or explained.
type report struct {
	errs spec.List
	// spec is the number of errors at the front of errs that the spec
	// found; the planner's own follow them.
	spec int
	// at and under index errs[:indexed] by their exact path and by every
	// path above it (sources[0].schema[1] is under sources[0].schema,
	// sources[0] and sources).
	at, under map[string]bool
	indexed   int
}

func newReport(specErrs spec.List) *report {
	r := &report{at: map[string]bool{}, under: map[string]bool{}}
	r.errs = append(r.errs, specErrs...)
	r.spec = len(specErrs)
	return r
}

func (r *report) index() {
	for ; r.indexed < len(r.errs); r.indexed++ {
		p := r.errs[r.indexed].Path
		if p == "" {
			continue
		}
		r.at[p] = true
		for ; p != ""; p = parentPath(p) {
			r.under[p] = true
		}
	}
}

// reportedAt reports whether an error names exactly path.
func (r *report) reportedAt(path string) bool {
	r.index()
	return r.at[path]
}

// reported reports whether an error names path or a field inside it.
func (r *report) reported(path string) bool {
	r.index()
	return r.under[path]
}

// parentPath drops the last key or index of a field path:
// sources[0].schema[1] → sources[0].schema → sources[0] → sources → "".
func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// result is every error of the pipeline, spec and planner, without the
// planner's follow-ons: an error at a field the spec already faulted, or
// inside it (an unset ${VAR} that left an option empty is one error, not
// also the connector's "missing path"), says nothing new. The list is
// sorted by position with duplicates removed.
func (r *report) result() error {
	faulted := map[string]bool{}
	for _, e := range r.errs[:r.spec] {
		if e.Path != "" {
			faulted[e.Path] = true
		}
	}
	out := append(spec.List(nil), r.errs[:r.spec]...)
	for _, e := range r.errs[r.spec:] {
		if !followsOn(e.Path, faulted) {
			out = append(out, e)
		}
	}
	return out.Err()
}

func followsOn(path string, faulted map[string]bool) bool {
	for p := path; p != ""; p = parentPath(p) {
		if faulted[p] {
			return true
		}
	}
	return false
}

// placeAt gives the errors of err that name no line the position and
// path of the element they came from, so that every error points into the
// file.
func placeAt(err error, pos spec.Pos, path string) spec.List {
	var list spec.List
	list.Add(err)
	return list.Placed(pos, path)
}

// Add appends err (a spec.Error, a spec.List or a join of them).
func (r *report) Add(err error) { r.errs.Add(err) }

// Addf appends a new error.
func (r *report) Addf(pos spec.Pos, path, format string, args ...any) {
	r.errs.Addf(pos, path, format, args...)
}

// aboutOptions is the errors of err about one of the connector's options
// (path.option), without those about the connector as a whole (at path
// itself, where the registry places what names no option).
func aboutOptions(err error, path string) error {
	var all, out spec.List
	all.Add(err)
	for _, e := range all {
		if e.Path != path {
			out = append(out, e)
		}
	}
	return out.Err()
}
