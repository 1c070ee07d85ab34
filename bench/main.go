// Command bench is etld's whole-process benchmark harness (issue 18's
// bench/, `make bench`). This first part generates the seeded data into
// the cache dir; the runner of the workloads (etld, the Go baselines
// under baseline/, DuckDB, Flink, interleaved) is not written yet.
//
// Usage: go run ./bench [-rows 10M] [-seed 1] [-cache bench/.cache]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	rowsFlag := flag.String("rows", "10M", "rows of events.csv (10M, 1M, 100k...)")
	seed := flag.Uint64("seed", 1, "seed of the data generator")
	cache := flag.String("cache", "bench/.cache", "cache dir for data, builds and outputs")
	flag.Parse()
	rows, err := parseRows(*rowsFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	dir := filepath.Join(*cache, fmt.Sprintf("data-%d-%d", rows, *seed))
	meta, err := generate(dir, rows, *seed)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	fmt.Printf("data in %s: %d rows, %d k1 keys, %d k2 keys, %d customers\n", dir, meta.Rows, meta.Keys1, meta.Keys2, meta.Customers)
}
