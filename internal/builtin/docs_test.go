package builtin

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestPipelineFormatDocumentsEveryType keeps docs/pipeline-format.md in step
// with the registry: every source and sink type has its own section and is
// named in the table of keys every source or sink has.
func TestPipelineFormatDocumentsEveryType(t *testing.T) {
	data, err := os.ReadFile("../../docs/pipeline-format.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	sources, sinks, ok := strings.Cut(doc, "\n## Sinks")
	if !ok {
		t.Fatal("docs/pipeline-format.md has no ## Sinks section")
	}
	typeRow := regexp.MustCompile("(?m)^\\| `type` \\| (.*)\\|$").FindStringSubmatch(sources)
	if typeRow == nil {
		t.Fatal("the Sources section has no `type` row")
	}
	r := Registry()
	for _, e := range r.Sources() {
		if !strings.Contains(sources, "### `type: "+e.Type+"`") {
			t.Errorf("source type %q has no ### section under ## Sources", e.Type)
		}
		if !strings.Contains(typeRow[1], "`"+e.Type+"`") {
			t.Errorf("the sources' `type` row %q does not name %q", typeRow[1], e.Type)
		}
	}
	for _, e := range r.Sinks() {
		if !strings.Contains(sinks, "`type: "+e.Type+"`") {
			t.Errorf("sink type %q has no ### section under ## Sinks", e.Type)
		}
	}
}
