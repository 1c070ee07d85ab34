package file_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/builtin"
	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/internal/testenv/pipefile"
	"github.com/etld/etld/pipeline"
)

// TestPipelineStrayQuote runs a file with a stray quote through a whole
// pipeline under each on_error policy: an unbalanced quote on line 2 of 18 is
// one bad record at line 2, and the 16 good rows after it are read.
func TestPipelineStrayQuote(t *testing.T) {
	var in strings.Builder
	var good []string
	for i := 1; i <= 18; i++ {
		if i == 2 {
			in.WriteString("\"bad quote,2,2.5\n")
			continue
		}
		l := fmt.Sprintf("s%d,%d,%d.5", i, i, i)
		in.WriteString(l + "\r\n") // CRLF, as Windows tools write it
		good = append(good, l)
	}
	tests := []struct {
		policy      string
		wantRows    []string // nil: the run fails
		wantSkipped int64
	}{
		{"fail", nil, 0},
		{"skip", good, 1},
		{"dead-letter", good, 1},
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			dir := t.TempDir()
			src, out, dlq := filepath.Join(dir, "in.csv"), filepath.Join(dir, "out.csv"), filepath.Join(dir, "dlq.jsonl")
			if err := os.WriteFile(src, []byte(in.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			yaml := fmt.Sprintf(`version: 1
name: stray-quote
sources:
  - name: s
    type: file
    path: %s
    schema: [id STRING, n BIGINT, x DOUBLE]
    on_error: %s
    dead_letter: %s
sinks:
  - {name: out, from: s, type: file, path: %s}
`, src, tt.policy, dlq, out)
			p := pipefile.Load(t, pipeline.Env{Registry: builtin.Registry()}, dir, yaml)
			sum, err := p.Run(testenv.Context(t, 30*time.Second), pipeline.RunOptions{})
			if tt.wantRows == nil {
				if err == nil || !strings.Contains(err.Error(), src+":2") || !strings.Contains(err.Error(), "no closing quote") {
					t.Fatalf("run: %v, want the bad record at %s:2", err, src)
				}
				if n := sum.Sources[0].In; n > 1 {
					t.Errorf("%d rows read before the failure, want at most the 1 before it", n)
				}
				return
			}
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSuffix(string(data), "\n"); got != strings.Join(tt.wantRows, "\n") {
				t.Errorf("out.csv:\n%s\nwant:\n%s", got, strings.Join(tt.wantRows, "\n"))
			}
			if c := sum.Sources[0]; c.In != int64(len(tt.wantRows)) || c.Skipped != tt.wantSkipped {
				t.Errorf("source counts: %d rows read, %d skipped; want %d, %d\n%s", c.In, c.Skipped, len(tt.wantRows), tt.wantSkipped, sum)
			}
			// The summary carries what the progress bar and the table show.
			if c, size := sum.Sources[0], int64(in.Len()); c.Read != size || c.Size != size {
				t.Errorf("source read %d bytes of %d, want all %d", c.Read, c.Size, size)
			}
			if m := sum.Sinks[0].Mode; m != "append" {
				t.Errorf("sink mode in the summary = %q, want append", m)
			}
			if tt.policy != "dead-letter" {
				return
			}
			dead, err := os.ReadFile(dlq)
			if err != nil {
				t.Fatal(err)
			}
			var entry struct {
				Position string `json:"position"`
				Record   string `json:"record"`
				Error    string `json:"error"`
			}
			lines := strings.Split(strings.TrimSuffix(string(dead), "\n"), "\n")
			if len(lines) != 1 {
				t.Fatalf("dead letters:\n%s\nwant one", dead)
			}
			if err := json.Unmarshal([]byte(lines[0]), &entry); err != nil {
				t.Fatalf("dead letter %s: %v", lines[0], err)
			}
			if entry.Position != src+":2" || entry.Record != `"bad quote,2,2.5` || !strings.Contains(entry.Error, "no closing quote") {
				t.Errorf("dead letter %+v, want record %q at %s:2", entry, `"bad quote,2,2.5`, src)
			}
		})
	}
}
