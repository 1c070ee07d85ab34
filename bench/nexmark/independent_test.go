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
// every 123rd auction.
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
	var out []string
	for {
		b, err := src.Read(ctx, 512)
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		for _, c := range b.Changes {
			if c.Row[0].Int64() != 2 {
				continue
			}
			var fs [7]row.Value
			for i := range fs {
				v, ok := c.Row[3].Item(i)
				if !ok {
					t.Fatalf("a bid without its field %d: %s", i, c.Row[3])
				}
				fs[i] = v
			}
			if s, ok := f(bid{fs[0], fs[1], fs[2], fs[3], fs[4], fs[5], fs[6]}); ok {
				out = append(out, s)
			}
		}
		if err != nil {
			return out
		}
	}
}
