// Command mapgroup is W2 batch's hand-written baseline: one pass over
// events.csv (id,k1,k2,cust,amount,name,ts) splitting bytes, a Go map
// from k1 to COUNT(*), SUM(amount), MAX(amount), then one line per key
// (k1,count,sum,max) in any order.
//
// Usage: mapgroup IN OUT
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
)

type agg struct{ count, sum, max int64 }

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: mapgroup IN OUT")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "mapgroup:", err)
		os.Exit(1)
	}
}

func atoi(b []byte) (int64, error) {
	if len(b) == 0 {
		return 0, fmt.Errorf("an empty number")
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("not a number: %q", b)
		}
		v = v*10 + int64(c-'0')
	}
	return v, nil
}

func run(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	groups := make(map[int64]*agg, 1<<17)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4<<20), 4<<20)
	for sc.Scan() {
		line := sc.Bytes()
		// k1 is field 1, amount field 4.
		_, rest, _ := bytes.Cut(line, []byte{','})
		k1b, rest, _ := bytes.Cut(rest, []byte{','})
		_, rest, _ = bytes.Cut(rest, []byte{','})
		_, rest, _ = bytes.Cut(rest, []byte{','})
		amb, _, ok := bytes.Cut(rest, []byte{','})
		if !ok {
			return fmt.Errorf("a short record: %q", line)
		}
		k1, err := atoi(k1b)
		if err != nil {
			return err
		}
		amount, err := atoi(amb)
		if err != nil {
			return err
		}
		g := groups[k1]
		if g == nil {
			g = &agg{max: amount}
			groups[k1] = g
		}
		g.count++
		g.sum += amount
		g.max = max(g.max, amount)
	}
	if err := sc.Err(); err != nil && err != io.EOF {
		return err
	}
	o, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(o, 1<<20)
	var b []byte
	for k, g := range groups {
		b = strconv.AppendInt(b[:0], k, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, g.count, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, g.sum, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, g.max, 10)
		b = append(b, '\n')
		w.Write(b)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return o.Close()
}
