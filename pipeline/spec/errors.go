// Package spec reads pipeline files: YAML into a typed spec whose every node
// keeps its file position and field path, with ${VAR} expansion and strict
// key checking. It reports all the problems of a file at once.
package spec

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Pos is a place in a pipeline file.
type Pos struct {
	File string
	Line int
	Col  int
}

func (p Pos) String() string {
	switch {
	case p.File == "" && p.Line == 0:
		return "-"
	case p.Line == 0:
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// IsValid reports whether p names a line.
func (p Pos) IsValid() bool { return p.Line > 0 }

// At returns the position of a YAML node in file.
func At(file string, n *yaml.Node) Pos {
	if n == nil {
		return Pos{File: file}
	}
	return Pos{File: file, Line: n.Line, Col: n.Column}
}

// Error is one problem in a pipeline file: where, which field, what.
type Error struct {
	Pos  Pos
	Path string // field path, e.g. sources[0].schema[2]
	Msg  string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("%s: %s", e.Pos, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.Pos, e.Path, e.Msg)
}

// Errorf makes an Error.
func Errorf(pos Pos, path, format string, args ...any) *Error {
	return &Error{Pos: pos, Path: path, Msg: fmt.Sprintf(format, args...)}
}

// List collects the errors of a file; it is itself an error listing them
// one per line in file order.
type List []*Error

// Add appends e, or every Error inside e when it is a List or a join.
func (l *List) Add(err error) {
	if err == nil {
		return
	}
	var list List
	if errors.As(err, &list) {
		*l = append(*l, list...)
		return
	}
	var e *Error
	if errors.As(err, &e) {
		*l = append(*l, e)
		return
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, inner := range joined.Unwrap() {
			l.Add(inner)
		}
		return
	}
	*l = append(*l, &Error{Msg: err.Error()})
}

// Addf appends a new Error.
func (l *List) Addf(pos Pos, path, format string, args ...any) {
	*l = append(*l, Errorf(pos, path, format, args...))
}

// Err returns the list sorted by position without repeats, or nil when it
// is empty.
// Placed returns l with every error that names no line moved to pos
// (and to path, when it names no field either), so that each points into
// the file. The errors are copies: an error a connector keeps and returns
// again is never changed under it.
func (l List) Placed(pos Pos, path string) List {
	out := make(List, len(l))
	for i, e := range l {
		if e.Pos.IsValid() {
			out[i] = e
			continue
		}
		placed := *e
		placed.Pos = pos
		if placed.Path == "" {
			placed.Path = path
		}
		out[i] = &placed
	}
	return out
}

func (l List) Err() error {
	if len(l) == 0 {
		return nil
	}
	sorted := make(List, 0, len(l))
	seen := make(map[Error]bool, len(l))
	for _, e := range l {
		if !seen[*e] {
			seen[*e] = true
			sorted = append(sorted, e)
		}
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i].Pos, sorted[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return sorted
}

func (l List) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// JoinPath appends a key to a field path.
func JoinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// IndexPath appends an index to a field path.
func IndexPath(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// closest returns the candidate nearest to s by edit distance, if it is
// near enough to be a likely typo.
func Closest(s string, candidates []string) string {
	best, bestD := "", len(s)/2+2
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(s), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
