// Command csvfilter is W1's plain baseline: an encoding/csv
// read-filter-write loop over events.csv (id,k1,k2,cust,amount,name,ts),
// writing id,k1,amount,name of the rows with amount < 5000, the typed
// columns parsed and formatted as a program that checks them would.
//
// Usage: csvfilter IN OUT
package main

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strconv"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: csvfilter IN OUT")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "csvfilter:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	o, err := os.Create(out)
	if err != nil {
		return err
	}
	r := csv.NewReader(bufio.NewReaderSize(f, 1<<20))
	r.ReuseRecord = true
	r.FieldsPerRecord = 7
	bw := bufio.NewWriterSize(o, 1<<20)
	w := csv.NewWriter(bw)
	rec := make([]string, 4)
	for {
		fields, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		amount, err := strconv.ParseInt(fields[4], 10, 64)
		if err != nil {
			return err
		}
		if amount >= 5000 {
			continue
		}
		id, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return err
		}
		k1, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			return err
		}
		rec[0], rec[1], rec[2], rec[3] = strconv.FormatInt(id, 10), strconv.FormatInt(k1, 10), strconv.FormatInt(amount, 10), fields[5]
		if err := w.Write(rec); err != nil {
			return err
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return o.Close()
}
