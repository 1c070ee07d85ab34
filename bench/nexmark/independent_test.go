package nexmark_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/sources/nexmark"
)

// independent gives, for the simple queries, their rows computed in Go
// from the source's events, without etld's SQL: q0 every bid, q1 every bid
// with its price in euros (0.908 * price, DECIMAL(23, 3)), q2 the bids on
// every 123rd auction, q13 every bid with its side input; and q6, which
// Flink cannot run (q6_test.go).
var independent = map[string]func(t *testing.T) []string{
	"q0": func(t *testing.T) []string {
		return eachBid(t, func(b bid) (string, bool) {
			return join(b.auction, b.bidder, b.price, b.dateTime, b.extra), true
		})
	},
	"q1": func(t *testing.T) []string {
		return eachBid(t, func(b bid) (string, bool) {
			p := b.price.Int64() * 908
			euros := fmt.Sprintf("%d.%03d", p/1000, p%1000)
			return join(b.auction, b.bidder, euros, b.dateTime, b.extra), true
		})
	},
	"q2": func(t *testing.T) []string {
		return eachBid(t, func(b bid) (string, bool) {
			return join(b.auction, b.price), b.auction.Int64()%123 == 0
		})
	},
	// Every bid with the side input's value of its auction modulo 10000:
	// the key's own text.
	"q13": func(t *testing.T) []string {
		return eachBid(t, func(b bid) (string, bool) {
			return join(b.auction, b.bidder, b.price, b.dateTime, b.auction.Int64()%10000), true
		})
	},
	"q6": q6,
}

// bid is a bid event's fields, as the source gives them.
type bid struct{ auction, bidder, price, channel, url, dateTime, extra row.Value }

func join(parts ...any) string {
	s := ""
	for i, p := range parts {
		if i > 0 {
			s += "|"
		}
		s += fmt.Sprint(p)
	}
	return s
}

// eachBid reads the test's events from the nexmark source itself (the
// options the test gives the query files) and keeps what f makes of each
// bid.
func eachBid(t *testing.T, f func(bid) (string, bool)) []string {
	t.Helper()
	var out []string
	eachEvent(t, func(kind int64, fs []row.Value) {
		if kind != 2 {
			return
		}
		if s, ok := f(bid{fs[0], fs[1], fs[2], fs[3], fs[4], fs[5], fs[6]}); ok {
			out = append(out, s)
		}
	})
	return out
}

// eachEvent calls f with each of the test's events in the source's
// order: its event_type and the fields of its person (0), auction (1) or
// bid (2).
func eachEvent(t *testing.T, f func(kind int64, fields []row.Value)) {
	t.Helper()
	rate, seed, base := int64(eventRate), int64(1), "2024-01-01 00:00:00"
	src, err := nexmark.New(nexmark.Config{Events: events, FirstEventRate: &rate, NextEventRate: &rate, Seed: &seed, BaseTime: &base},
		connector.SourceEnv{Name: "datagen", Schema: testenv.Schema(t, nexmark.Columns...)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := src.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer src.Close(ctx)
	for {
		b, err := src.Read(ctx, 512)
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		for _, c := range b.Changes {
			kind := c.Row[0].Int64()
			col := c.Row[1+kind]
			var fs []row.Value
			for i := 0; ; i++ {
				v, ok := col.Item(i)
				if !ok {
					break
				}
				fs = append(fs, v)
			}
			f(kind, fs)
		}
		if err != nil {
			return
		}
	}
}
