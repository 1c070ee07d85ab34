package main

import (
	"bytes"
	"flag"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// goFlagListing matches a line of Go's flag.PrintDefaults ("  -quiet").
var goFlagListing = regexp.MustCompile(`(?m)^  -[a-z]`)

// Every command answers --help and -h with its usage on stdout, in the
// style of `etld --help`, and exits 0.
func TestEveryCommandHasHelp(t *testing.T) {
	for _, cmd := range []string{"run", "validate", "explain", "test", "state", "healthcheck", "version"} {
		for _, h := range []string{"--help", "-h", "-help"} {
			t.Run(cmd+" "+h, func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				code := run([]string{cmd, h}, &stdout, &stderr)
				if code != 0 || stderr.Len() != 0 {
					t.Fatalf("exit %d, stderr %q; want 0 and nothing on stderr", code, stderr.String())
				}
				out := stdout.String()
				if !strings.HasPrefix(out, "etld "+cmd) || !strings.Contains(out, "\nUsage:\n  etld "+cmd) {
					t.Errorf("usage of %s:\n%s", cmd, out)
				}
				// Flags are shown as in `etld --help`, never Go's -flag listing.
				if goFlagListing.MatchString(out) || strings.Contains(out, "Usage of ") {
					t.Errorf("Go's flag listing in the usage of %s:\n%s", cmd, out)
				}
			})
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--help"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "etld COMMAND --help") {
		t.Errorf("etld --help: exit %d:\n%s", code, stdout.String())
	}
}

// A wrong flag is an error on stderr with exit 2 and a pointer to the
// usage.
func TestUnknownFlagExits2(t *testing.T) {
	for _, cmd := range []string{"run", "validate", "explain", "healthcheck"} {
		var stdout, stderr bytes.Buffer
		code := run([]string{cmd, "--nope"}, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), "etld "+cmd+": flag provided but not defined: --nope") || !strings.Contains(stderr.String(), "etld "+cmd+" --help") || stdout.Len() != 0 {
			t.Errorf("%s --nope: exit %d, stdout %q, stderr %q", cmd, code, stdout.String(), stderr.String())
		}
	}
}

// The usages list every flag the commands define, so that they cannot
// drift apart; --daemon among them.
func TestUsageListsEveryFlag(t *testing.T) {
	for name, c := range map[string]struct {
		fs    *flag.FlagSet
		usage string
	}{
		"run":         {newRunFlags().fs, runUsage},
		"healthcheck": {newHealthcheckFlags().fs, healthcheckUsage},
		"etld":        {newRunFlags().fs, usage},
	} {
		c.fs.VisitAll(func(f *flag.Flag) {
			if !strings.Contains(c.usage, "  --"+f.Name+" ") {
				t.Errorf("the usage of %s does not list --%s", name, f.Name)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	tests := []struct {
		name   string
		ldflag string
		bi     *debug.BuildInfo
		want   []string
	}{
		{"from a checkout, stamped", "dev", &debug.BuildInfo{
			GoVersion: "go1.26.8",
			Main:      debug.Module{Path: "github.com/etld/etld", Version: "(devel)"},
			Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "f6dfc8e2da5656dc8eae6ddf598b5309c7816a7c"},
				{Key: "vcs.time", Value: "2026-12-01T20:00:00Z"},
				{Key: "vcs.modified", Value: "true"},
				{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"},
			},
		}, []string{"etld (devel)\n", "  commit  f6dfc8e2da5656dc8eae6ddf598b5309c7816a7c (modified)\n", "  time    2026-12-01T20:00:00Z\n", "  go      go1.26.8 linux/amd64\n"}},
		{"a tagged module", "dev", &debug.BuildInfo{
			GoVersion: "go1.26.8",
			Main:      debug.Module{Path: "github.com/etld/etld", Version: "v1.4.0"},
		}, []string{"etld v1.4.0\n", "  commit  unknown (built without VCS stamping)\n", "  go      go1.26.8 " + runtime.GOOS + "/" + runtime.GOARCH + "\n"}},
		{"set by -ldflags", "v2.0.0-rc1", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, []string{"etld v2.0.0-rc1\n"}},
		{"no build info", "dev", nil, []string{"etld dev\n", "  go      " + runtime.Version()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := readVersion(tt.ldflag, tt.bi).String()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("version:\n%s\nlacks %q", got, w)
				}
			}
		})
	}
	// The binary reads its own build info.
	var stdout, stderr bytes.Buffer
	if code := run([]string{"version"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), runtime.Version()) {
		t.Errorf("etld version: exit %d:\n%s", code, stdout.String())
	}
}
