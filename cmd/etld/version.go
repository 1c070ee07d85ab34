package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// version is set at build time with -ldflags "-X main.version=..."; when
// it is not, the module's version from the build information stands in
// ("(devel)" for a build from a checkout).
var version = "dev"

// versionInfo is what `etld version` prints.
type versionInfo struct {
	Version string
	// Revision, Time and Modified are the VCS stamp (go build stamps
	// them in a git checkout unless -buildvcs=false).
	Revision, Time string
	Modified       bool
	GoVersion      string
	Platform       string // GOOS/GOARCH
}

// readVersion reads the version from the -ldflags value and bi (nil when
// the binary has no build information).
func readVersion(ldflag string, bi *debug.BuildInfo) versionInfo {
	v := versionInfo{Version: ldflag, GoVersion: runtime.Version()}
	goos, goarch := runtime.GOOS, runtime.GOARCH
	if bi != nil {
		if ldflag == "dev" && bi.Main.Version != "" {
			v.Version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			v.GoVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Revision = s.Value
			case "vcs.time":
				v.Time = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			case "GOOS":
				goos = s.Value
			case "GOARCH":
				goarch = s.Value
			}
		}
	}
	v.Platform = goos + "/" + goarch
	return v
}

// buildVersion is the running binary's version.
func buildVersion() versionInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return readVersion(version, bi)
}

func (v versionInfo) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "etld %s\n", v.Version)
	switch {
	case v.Revision == "":
		b.WriteString("  commit  unknown (built without VCS stamping)\n")
	case v.Modified:
		fmt.Fprintf(&b, "  commit  %s (modified)\n", v.Revision)
	default:
		fmt.Fprintf(&b, "  commit  %s\n", v.Revision)
	}
	if v.Time != "" {
		fmt.Fprintf(&b, "  time    %s\n", v.Time)
	}
	fmt.Fprintf(&b, "  go      %s %s\n", v.GoVersion, v.Platform)
	return b.String()
}
