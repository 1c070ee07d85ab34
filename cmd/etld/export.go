package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/etld/etld/pipeline/export"
)

const exportUsage = `etld export flink writes each pipeline as a Flink SQL script: SET statements,
a CREATE TABLE per source and sink with the Flink connector's options, a
CREATE TEMPORARY VIEW per transform and one EXECUTE STATEMENT SET with an
INSERT INTO per sink. ${VAR} references stay placeholders, never values.
What Flink does otherwise than etld is listed at the top of the script, and
the command then exits 1 unless --allow-differences. docs/flink-export.md
shows how to run the script (sql-client.sh -f, Flink Kubernetes Operator).

Usage:
  etld export flink [flags] FILE|DIR...

Flags:
  -o, --output FILE         write the script to FILE (several pipelines: a
                            directory, one NAME.sql each); default stdout
  --allow-differences       exit 0 even when Flink will run a pipeline otherwise
  --k8s FILE                also write a sample Flink Kubernetes Operator manifest
                            (a ConfigMap with the script and a FlinkDeployment)
`

func cmdExport(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "flink" && !strings.HasPrefix(args[0], "-")) {
		fmt.Fprint(stderr, "etld export: name the target engine: etld export flink FILE|DIR...\nRun 'etld export --help' for usage.\n")
		return 2
	}
	if args[0] != "flink" {
		// etld export --help
		fs := flag.NewFlagSet("export", flag.ContinueOnError)
		return max(parseFlags(fs, args, exportUsage, stdout, stderr), 0)
	}
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	var out, k8s string
	fs.StringVar(&out, "o", "", "output file")
	fs.StringVar(&out, "output", "", "output file")
	fs.StringVar(&k8s, "k8s", "", "manifest file")
	allow := fs.Bool("allow-differences", false, "exit 0 with differences")
	if code := parseFlags(fs, args[1:], exportUsage, stdout, stderr); code >= 0 {
		return code
	}
	paths := fs.Args()
	if len(paths) == 0 {
		fmt.Fprintln(stderr, "etld export flink: name at least one pipeline file or directory")
		return 2
	}
	secrets := secretsOf(paths)
	ps, err := load(paths, slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Fprintln(stderr, secrets.Redact(err.Error()))
		reportPanic(stderr, err, secrets)
		return 1
	}
	var scripts []*export.Script
	failed := false
	for _, p := range ps {
		s, err := export.Flink(p.Plan)
		if err != nil {
			fmt.Fprintln(stderr, secrets.Redact(err.Error()))
			failed = true
			continue
		}
		scripts = append(scripts, s)
	}
	if failed {
		return 1
	}
	if err := writeScripts(scripts, out, k8s, stdout); err != nil {
		fmt.Fprintf(stderr, "etld export flink: %v\n", err)
		return 1
	}
	differences := 0
	for _, s := range scripts {
		for _, d := range s.Differences {
			fmt.Fprintf(stderr, "%s\n", d)
		}
		differences += len(s.Differences)
	}
	if differences > 0 && !*allow {
		fmt.Fprintf(stderr, "etld export flink: %d differences between etld and Flink (listed above and at the top of the script); pass --allow-differences to accept them\n", differences)
		return 1
	}
	return 0
}

// writeScripts writes the scripts to out (stdout when ""; a directory
// of NAME.sql files when there are several) and the manifests to k8s.
func writeScripts(scripts []*export.Script, out, k8s string, stdout io.Writer) error {
	switch {
	case out == "" || out == "-":
		for i, s := range scripts {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			fmt.Fprint(stdout, s.SQL)
		}
	case len(scripts) == 1 && !isDir(out):
		if err := os.WriteFile(out, []byte(scripts[0].SQL), 0o644); err != nil {
			return err
		}
	default:
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
		for _, s := range scripts {
			if err := os.WriteFile(filepath.Join(out, s.Pipeline+".sql"), []byte(s.SQL), 0o644); err != nil {
				return err
			}
		}
	}
	if k8s == "" {
		return nil
	}
	var b strings.Builder
	for i, s := range scripts {
		if i > 0 {
			b.WriteString("---\n")
		}
		b.WriteString(export.K8s(s))
	}
	return os.WriteFile(k8s, []byte(b.String()), 0o644)
}
