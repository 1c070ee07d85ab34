// Command bytefilter is W1's limit: a hand-written byte-splitting loop
// over events.csv (id,k1,k2,cust,amount,name,ts) that writes
// id,k1,amount,name of the rows with amount < 5000, copying field bytes
// as they are (no quoting: the generated data has none).
//
// Usage: bytefilter IN OUT
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: bytefilter IN OUT")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "bytefilter:", err)
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
	w := bufio.NewWriterSize(o, 1<<20)
	buf := make([]byte, 4<<20)
	var carry int
	var starts [8]int
	for {
		n, rerr := f.Read(buf[carry:])
		data := buf[:carry+n]
		pos := 0
		for {
			nl := bytes.IndexByte(data[pos:], '\n')
			if nl < 0 {
				break
			}
			line := data[pos : pos+nl]
			pos += nl + 1
			nf := 1
			starts[0] = 0
			for i, c := range line {
				if c == ',' && nf < 7 {
					starts[nf] = i + 1
					nf++
				}
			}
			if nf != 7 {
				return fmt.Errorf("a record of %d fields: %q", nf, line)
			}
			starts[7] = len(line) + 1
			amount := int64(0)
			for _, c := range line[starts[4] : starts[5]-1] {
				if c < '0' || c > '9' {
					return fmt.Errorf("amount %q", line[starts[4]:starts[5]-1])
				}
				amount = amount*10 + int64(c-'0')
			}
			if amount >= 5000 {
				continue
			}
			w.Write(line[:starts[2]])
			w.Write(line[starts[4] : starts[6]-1])
			w.WriteByte('\n')
		}
		carry = copy(buf, data[pos:])
		if rerr == io.EOF {
			if carry > 0 {
				return fmt.Errorf("a last line without its newline")
			}
			break
		}
		if rerr != nil {
			return rerr
		}
		if carry == len(buf) {
			return fmt.Errorf("a line longer than %d bytes", len(buf))
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return o.Close()
}
