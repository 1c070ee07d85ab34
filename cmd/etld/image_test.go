package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The image users build (Dockerfile) and the one built from a host binary
// (Dockerfile.prebuilt, the one TestImage checks) declare the same user,
// volume, port, health check, stop signal, entrypoint and command.
func TestDockerfilesDeclareTheSameImage(t *testing.T) {
	root := repoRoot(t)
	full := imageDeclarations(t, filepath.Join(root, "Dockerfile"))
	prebuilt := imageDeclarations(t, filepath.Join(root, "Dockerfile.prebuilt"))
	for _, want := range []string{"USER", "VOLUME", "EXPOSE", "HEALTHCHECK", "STOPSIGNAL", "ENTRYPOINT", "CMD"} {
		if !slices.ContainsFunc(full, func(d string) bool { return strings.HasPrefix(d, want+" ") }) {
			t.Errorf("the Dockerfile's final stage declares no %s", want)
		}
	}
	if !slices.Equal(full, prebuilt) {
		t.Errorf("the final stages differ:\nDockerfile:\n  %s\nDockerfile.prebuilt:\n  %s", strings.Join(full, "\n  "), strings.Join(prebuilt, "\n  "))
	}
}

// imageDeclarations returns the final stage's instructions other than
// FROM, COPY and RUN, continuation lines joined and spaces collapsed.
func imageDeclarations(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var decls []string
	var cur string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if cur == "" && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		cur += " " + strings.TrimSuffix(line, "\\")
		if strings.HasSuffix(line, "\\") {
			continue
		}
		instr := strings.Join(strings.Fields(cur), " ")
		cur = ""
		switch word, _, _ := strings.Cut(instr, " "); strings.ToUpper(word) {
		case "FROM":
			decls = nil // a new stage: only the last one makes the image
		case "COPY", "RUN", "WORKDIR", "ARG":
		default:
			decls = append(decls, instr)
		}
	}
	return decls
}
