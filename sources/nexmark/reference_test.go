package nexmark

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"testing"
)

// The recorded reference (scripts/nexmark/record.sh): the reference
// generator's first 1M events for one seed and base time, as a digest of
// the whole dump and its first lines. The dump leaves out what the
// reference draws from its unseeded per-process texts (extra, url) but
// keeps the extra's length, so every draw of every event is compared.
const (
	refSeed     = 42
	refBaseTime = 1700000000000
)

// appendDump appends event id's line in Dump.java's format.
func appendDump(b []byte, id int64, e *event) []byte {
	b = strconv.AppendInt(b, id, 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, int64(e.typ), 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, e.ts, 10)
	tab := func(s string) { b = append(append(b, '\t'), s...) }
	num := func(v int64) { b = strconv.AppendInt(append(b, '\t'), v, 10) }
	switch e.typ {
	case typePerson:
		p := &e.person
		num(p.id)
		tab(p.name)
		tab(p.email)
		tab(p.creditCard)
		tab(p.city)
		tab(p.state)
		num(e.ts)
		num(int64(len(p.extra)))
	case typeAuction:
		a := &e.auction
		num(a.id)
		num(a.seller)
		num(a.category)
		num(a.initialBid)
		num(a.reserve)
		num(e.ts)
		num(a.expires)
		tab(a.itemName)
		tab(a.desc)
		num(int64(len(a.extra)))
	default:
		x := &e.bid
		num(x.auction)
		num(x.bidder)
		num(x.price)
		tab(x.channel)
		num(e.ts)
		num(int64(len(x.extra)))
	}
	return append(b, '\n')
}

func readReference(t *testing.T) (digest string, events int64, head []string) {
	t.Helper()
	raw, err := os.ReadFile("testdata/reference.sha256")
	if err != nil {
		t.Fatal(err)
	}
	var seed, base int64
	var commit string
	if _, err := fmt.Sscanf(string(raw), "%s %d events seed %d base_time %d nexmark %s",
		&digest, &events, &seed, &base, &commit); err != nil {
		t.Fatalf("testdata/reference.sha256: %v", err)
	}
	if seed != refSeed || base != refBaseTime {
		t.Fatalf("recorded with seed %d base_time %d; the test generates seed %d base_time %d", seed, base, refSeed, refBaseTime)
	}
	f, err := os.Open("testdata/reference-head.tsv.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(z)
	for sc.Scan() {
		head = append(head, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return digest, events, head
}

// TestReferenceGenerator: etld's generator gives the reference Nexmark
// generator's events, every draw, for the first 1M events.
func TestReferenceGenerator(t *testing.T) {
	digest, events, head := readReference(t)
	if len(head) == 0 || events < int64(len(head)) {
		t.Fatalf("reference has %d events and %d sample lines", events, len(head))
	}
	c := defaultGenConfig()
	c.baseTime = refBaseTime
	r := newSplitMix(refSeed)
	h := sha256.New()
	var e event
	var line []byte
	for id := range events {
		c.next(id, &r, &e)
		line = appendDump(line[:0], id, &e)
		if id < int64(len(head)) {
			if got := string(bytes.TrimSuffix(line, []byte("\n"))); got != head[id] {
				t.Fatalf("event %d:\n got  %s\n want %s", id, got, head[id])
			}
		}
		h.Write(line)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != digest {
		t.Fatalf("the first %d events agree; the digest of all %d is %s, want %s",
			len(head), events, got, digest)
	}
}
