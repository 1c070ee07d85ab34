package plan_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/pipeline/plan"
)

// A sink or dead-letter file that is a file a source reads is refused
// also when the two names differ only by symlinks: a symlinked
// directory, a symlink to the file, a file not yet written in a
// symlinked directory that a followed glob covers, and a glob whose
// existing match is a symlink to the output.
func TestFileLoopsThroughSymlinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(real, "in.csv")
	if err := os.WriteFile(in, []byte("a,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	alias := filepath.Join(dir, "alias.csv")
	watched := filepath.Join(dir, "watched")
	for _, err := range []error{os.Symlink(real, link), os.Symlink(in, alias), os.Mkdir(watched, 0o755),
		os.Symlink(filepath.Join(real, "out.csv"), filepath.Join(watched, "current.csv"))} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for name, tc := range map[string]struct {
		source, follow, sink string
		want                 string // "" when the pipeline is valid
	}{
		"through a symlinked directory":  {source: filepath.Join(link, "in.csv"), sink: in, want: "the sink truncates the file"},
		"through a symlink to the file":  {source: alias, sink: in, want: "the sink truncates the file"},
		"new file in a followed glob":    {source: filepath.Join(real, "*.csv"), follow: "true", sink: filepath.Join(link, "new.csv"), want: "without end"},
		"glob matching a symlink to it":  {source: filepath.Join(watched, "*.csv"), follow: "true", sink: filepath.Join(real, "out.csv"), want: "without end"},
		"another file in the directory":  {source: in, sink: filepath.Join(link, "out.csv")},
		"a glob that matches elsewhere":  {source: filepath.Join(link, "*.json"), follow: "true", sink: filepath.Join(real, "out.csv")},
		"a bounded glob over the output": {source: filepath.Join(link, "*.csv"), follow: "false", sink: filepath.Join(real, "out.csv"), want: "read its own output"},
	} {
		t.Run(name, func(t *testing.T) {
			follow := tc.follow
			if follow == "" {
				follow = "false"
			}
			sp := parse(t, fmt.Sprintf(`version: 1
name: t
sources:
  - name: src
    type: file
    path: %q
    follow: %s
    schema: [k STRING, v INT]
sinks:
  - name: out
    from: src
    type: file
    path: %q
`, tc.source, follow, tc.sink))
			p, err := plan.Build(sp, plan.Env{Registry: builtin.Registry(), Logger: slog.New(slog.DiscardHandler)})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "":
				p.Close()
			case err == nil:
				p.Close()
				t.Fatalf("planned, want an error saying %q", tc.want)
			case !strings.Contains(err.Error(), "p.yaml:13:11: sinks[0].path: sink \"out\" writes") || !strings.Contains(err.Error(), tc.want):
				t.Fatalf("err = %v, want it at the sink's path saying %q", err, tc.want)
			}
		})
	}
}
