package builtin

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/connector"
)

// TestPipelineFormatDocumentsEveryType keeps docs/pipeline-format.md in step
// with the registry: every source and sink type has its own section and is
// named in the table of keys every source or sink has.
func TestPipelineFormatDocumentsEveryType(t *testing.T) {
	data, err := os.ReadFile("../docs/pipeline-format.md")
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
		if !regexp.MustCompile("(?m)^### .*`type: " + regexp.QuoteMeta(e.Type) + "`").MatchString(sources) {
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
	// Every format has a paragraph of its own under ## Formats, starting
	// with its name; a changelog format is described under ### Changelog
	// formats.
	_, formats, _ := strings.Cut(sources, "\n## Formats\n")
	formats, _, _ = strings.Cut(formats, "\n## ")
	_, changelog, hasChangelog := strings.Cut(formats, "\n### Changelog formats\n")
	if !hasChangelog {
		t.Error("## Formats has no ### Changelog formats section")
	}
	for _, e := range r.Formats() {
		if !strings.Contains(formats, "\n`"+e.Type+"`") {
			t.Errorf("format %q has no paragraph under ## Formats starting with `%s`", e.Type, e.Type)
		}
		if r.Changelog(connector.FormatSpec{Type: e.Type}) && !strings.Contains(changelog, "\n`"+e.Type+"`") {
			t.Errorf("changelog format %q is not described under ### Changelog formats", e.Type)
		}
	}
}
