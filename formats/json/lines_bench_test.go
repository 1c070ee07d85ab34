package json

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

const linesBenchRows = 20000

// keysBenchJSON is bench/'s matrix's keys-100k.json, smaller.
func keysBenchJSON() []byte {
	r := rand.New(rand.NewPCG(1, 2))
	var b []byte
	for i := range linesBenchRows {
		k := r.Int64N(100_000)
		b = fmt.Appendf(b, `{"id":%d,"ik":%d,"sk":"sensor_%d","ta":"g%d","tb":%d,"z":%d,"amount":%d}`+"\n", i, k, k, k/10, k%10, r.Int64N(100_000), r.Int64N(10_000))
	}
	return b
}

// nexmarkBenchJSON is events as bench/nexmark's json file holds them:
// per 50 events 1 person, 3 auctions, 46 bids, free text with escapes.
func nexmarkBenchJSON() []byte {
	r := rand.New(rand.NewPCG(3, 4))
	text := func(n int) string {
		var sb strings.Builder
		for range n {
			c := byte('H' + r.IntN(50))
			if c == '\\' {
				sb.WriteString(`\\`)
				continue
			}
			sb.WriteByte(c)
		}
		return sb.String()
	}
	at := func(i int) string { return fmt.Sprintf("2024-01-01 00:%02d:%02d.%03d", i/60000%60, i/1000%60, i%1000) }
	var b []byte
	for i := range linesBenchRows {
		switch k := i % 50; {
		case k == 0:
			b = fmt.Appendf(b, `{"event_type":0,"person":{"id":%d,"name":"Kate White","emailAddress":"lc ke@eqv.com","creditCard":"2102 6754 3669 6714","city":"Phoenix","state":"ID","dateTime":"%s","extra":"%s"},"auction":null,"bid":null}`,
				1000+i/50, at(i), text(80+r.IntN(100)))
		case k <= 3:
			b = fmt.Appendf(b, `{"event_type":1,"person":null,"auction":{"id":%d,"itemName":"zueyi kceyyie","description":"vjwj iuiocqnr","initialBid":%d,"reserve":%d,"dateTime":"%s","expires":"%s","seller":%d,"category":%d,"extra":"%s"},"bid":null}`,
				1000+i, r.IntN(3000000), r.IntN(3000000), at(i), at(i+300), 1000+r.IntN(100), 10+r.IntN(5), text(200+r.IntN(300)))
		default:
			b = fmt.Appendf(b, `{"event_type":2,"person":null,"auction":null,"bid":{"auction":%d,"bidder":%d,"price":%d,"channel":"Facebook","url":"https://www.nexmark.com/vzw/oqk/yi_k/item.htm?query=1","dateTime":"%s","extra":"%s"}}`,
				1000+r.IntN(1000), 2000+r.IntN(1000), r.IntN(100000), at(i), text(50+r.IntN(40)))
		}
		b = append(b, '\n')
	}
	return b
}

var nexmarkBenchSchema = []string{"event_type INT",
	"person ROW<id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR, city VARCHAR, state VARCHAR, `dateTime` TIMESTAMP(3), extra VARCHAR>",
	"auction ROW<id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT, reserve BIGINT, `dateTime` TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra VARCHAR>",
	"bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, `dateTime` TIMESTAMP(3), extra VARCHAR>"}

// BenchmarkDecodeLines decodes the matrix's keys and Nexmark's events line
// by line as the file source's parallel workers do (DecodeLine over the
// block, batches of 1024 reused), with the columns and the paths their
// queries read; "general" is the general path alone.
func BenchmarkDecodeLines(b *testing.B) {
	keys, events := keysBenchJSON(), nexmarkBenchJSON()
	keysSchema := []string{"id BIGINT", "ik BIGINT", "sk STRING", "ta STRING", "tb BIGINT", "z BIGINT", "amount BIGINT"}
	// Nexmark q0's: event_type, the three dateTimes (the source's
	// computed dateTime) and the bid's fields.
	q0 := []connector.FieldPath{{Column: 1, Fields: []int{6}}, {Column: 2, Fields: []int{5}}, {Column: 3, Fields: []int{0}}, {Column: 3, Fields: []int{1}},
		{Column: 3, Fields: []int{2}}, {Column: 3, Fields: []int{3}}, {Column: 3, Fields: []int{4}}, {Column: 3, Fields: []int{5}}, {Column: 3, Fields: []int{6}}}
	// Nexmark q2's: event_type, the dateTimes, bid.auction and bid.price.
	q2 := []connector.FieldPath{{Column: 1, Fields: []int{6}}, {Column: 2, Fields: []int{5}}, {Column: 3, Fields: []int{0}}, {Column: 3, Fields: []int{2}},
		{Column: 3, Fields: []int{5}}}
	for _, c := range []struct {
		name   string
		data   []byte
		schema []string
		cols   []int
		paths  []connector.FieldPath
	}{
		{"keys-str", keys, keysSchema, []int{2, 6}, nil},
		{"keys-all", keys, keysSchema, nil, nil},
		{"nexmark-q0", events, nexmarkBenchSchema, nil, q0},
		{"nexmark-q2", events, nexmarkBenchSchema, nil, q2},
	} {
		for _, general := range []bool{false, true} {
			name := c.name
			if general {
				name += "/general"
			}
			b.Run(name, func(b *testing.B) {
				sch := testenv.Schema(b, c.schema...)
				dec, err := NewDecoder(Options{}, sch)
				if err != nil {
					b.Fatal(err)
				}
				width := sch.Len()
				if c.cols != nil {
					if !dec.DecodeColumns(c.cols) {
						b.Fatal("DecodeColumns refused")
					}
					width = len(c.cols)
				}
				if c.paths != nil {
					dec.SetColumns([]bool{true, false, false, false})
					if !dec.DecodePaths(c.paths, 0) {
						b.Fatal("DecodePaths refused")
					}
					width += len(c.paths)
				}
				if general {
					dec.codec.fast = nil
				}
				batch := row.NewBatch(1024, width)
				b.SetBytes(int64(len(c.data)))
				n, cpu := 0, processCPU()
				for b.Loop() {
					n += decodeLines(b, dec, c.data, batch)
				}
				// CPU time, not the wall time of ns/op, which a loaded
				// machine stretches.
				b.ReportMetric(float64(processCPU()-cpu)/float64(n), "cpu-ns/row")
			})
		}
	}
}

// decodeLines decodes data line by line with DecodeLine.
func decodeLines(b *testing.B, dec *Decoder, data []byte, batch *row.Batch) int {
	s := unsafe.String(unsafe.SliceData(data), len(data))
	n := 0
	for off := 0; off < len(s); {
		k, err := dec.DecodeLine(s[off:], batch)
		if err != nil {
			b.Fatalf("%v: %.200s", err, s[off:])
		}
		off += k
		if batch.Len() == 1024 {
			batch.Reuse()
		}
		n++
	}
	if bytes.Count(data, []byte{'\n'}) != n {
		b.Fatalf("%d lines decoded, the data has %d", n, bytes.Count(data, []byte{'\n'}))
	}
	return n
}

// processCPU is the process's user and system CPU time so far, in ns.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
