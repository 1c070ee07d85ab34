package spec

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestDecodeSuggestsSkippedKeys: a typo of a key the caller consumed
// itself (on_error, name, ...) gets the same "did you mean" as a typo of
// the connector's own keys.
func TestDecodeSuggestsSkippedKeys(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("name: s\non_eror: skip\npth: x\n"), &doc); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Path string `yaml:"path"`
	}
	err := Decode("p.yaml", doc.Content[0], "sources[0]", &out, "name", "type", "on_error")
	for _, want := range []string{
		`p.yaml:2:1: sources[0].on_eror: unknown key; did you mean "on_error"?`,
		`p.yaml:3:1: sources[0].pth: unknown key; did you mean "path"?`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Decode = %v, want %s", err, want)
		}
	}
}
