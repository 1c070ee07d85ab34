package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// The data: events.csv (id,k1,k2,cust,amount,name,ts), one row per
// millisecond of event time from 2024-01-01 00:00:00 in order; k1 has
// 100k keys, k2 1M, cust 1.1M (customers.csv holds ids below 1M, so about
// 9% of the orders find no customer); amount is uniform in [0, 10000).
// customers.csv is id,cname,segment for ids 0..customers-1. Everything
// comes from a PCG seeded with seed, so a scale always gives the same bytes.
const (
	keys1     = 100_000
	keys2     = 1_000_000
	custRange = 1_100_000
	customers = 1_000_000
)

var epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

type dataMeta struct {
	Rows      int64  `json:"rows"`
	Seed      uint64 `json:"seed"`
	Keys1     int64  `json:"distinct_k1"`
	Keys2     int64  `json:"distinct_k2"`
	Customers int64  `json:"customers"`
}

// generate writes the data for rows into dir unless it is there already.
func generate(dir string, rows int64, seed uint64) (dataMeta, error) {
	metaPath := filepath.Join(dir, "meta.json")
	var meta dataMeta
	if b, err := os.ReadFile(metaPath); err == nil && json.Unmarshal(b, &meta) == nil && meta.Rows == rows && meta.Seed == seed {
		return meta, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return meta, err
	}
	meta = dataMeta{Rows: rows, Seed: seed, Customers: customers}
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	seen1 := make([]bool, keys1)
	seen2 := make([]bool, keys2)
	err := writeFile(filepath.Join(dir, "events.csv"), func(w *bufio.Writer) {
		var b []byte
		for i := range rows {
			k1 := r.Int64N(keys1)
			k2 := r.Int64N(keys2)
			cust := r.Int64N(custRange)
			amount := r.Int64N(10000)
			if !seen1[k1] {
				seen1[k1] = true
				meta.Keys1++
			}
			if !seen2[k2] {
				seen2[k2] = true
				meta.Keys2++
			}
			b = b[:0]
			b = strconv.AppendInt(b, i, 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, k1, 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, k2, 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, cust, 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, amount, 10)
			b = append(b, ",n"...)
			b = strconv.AppendInt(b, r.Int64N(1000), 36)
			b = append(b, ',')
			b = epoch.Add(time.Duration(i)*time.Millisecond).AppendFormat(b, "2006-01-02 15:04:05.000")
			b = append(b, '\n')
			w.Write(b)
		}
	})
	if err != nil {
		return meta, err
	}
	err = writeFile(filepath.Join(dir, "customers.csv"), func(w *bufio.Writer) {
		for id := range int64(customers) {
			fmt.Fprintf(w, "%d,c%d,s%d\n", id, r.Int64N(1<<30), id%7)
		}
	})
	if err != nil {
		return meta, err
	}
	b, _ := json.MarshalIndent(meta, "", "  ")
	return meta, os.WriteFile(metaPath, b, 0o644)
}

func writeFile(path string, fill func(*bufio.Writer)) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fill(w)
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
