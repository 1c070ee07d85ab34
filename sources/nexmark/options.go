package nexmark

import (
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// genConfigOf checks the generator's options and builds its settings
// (without the base time).
func genConfigOf(cfg Config) (genConfig, []error) {
	c := defaultGenConfig()
	var errs []error
	// positive reads an option that must be in [1, limit], keeping def
	// when absent.
	positive := func(key string, v *int64, limit int64, def int64) int64 {
		if v == nil {
			return def
		}
		if *v < 1 || *v > limit {
			errs = append(errs, connector.Errorf(key, "must be between 1 and %d, got %d", limit, *v))
			return def
		}
		return *v
	}
	const maxProp, maxSize, maxRatio, maxRate = 1 << 20, 1 << 18, 1 << 30, 1 << 30
	c.personProp = positive("person_proportion", cfg.PersonProportion, maxProp, c.personProp)
	c.auctionProp = positive("auction_proportion", cfg.AuctionProportion, maxProp, c.auctionProp)
	c.bidProp = positive("bid_proportion", cfg.BidProportion, maxProp, c.bidProp)
	c.totalProp = c.personProp + c.auctionProp + c.bidProp
	c.avgPersonSize = int(positive("person_avg_size", cfg.PersonAvgSize, maxSize, int64(c.avgPersonSize)))
	c.avgAuctionSize = int(positive("auction_avg_size", cfg.AuctionAvgSize, maxSize, int64(c.avgAuctionSize)))
	c.avgBidSize = int(positive("bid_avg_size", cfg.BidAvgSize, maxSize, int64(c.avgBidSize)))
	c.hotSellers = int32(positive("auction_hot_ratio_sellers", cfg.AuctionHotRatioSellers, maxRatio, int64(c.hotSellers)))
	c.hotAuctions = int32(positive("bid_hot_ratio_auctions", cfg.BidHotRatioAuctions, maxRatio, int64(c.hotAuctions)))
	c.hotBidders = int32(positive("bid_hot_ratio_bidders", cfg.BidHotRatioBidders, maxRatio, int64(c.hotBidders)))
	first := positive("first_event_rate", cfg.FirstEventRate, maxRate, 10000)
	if cfg.NextEventRate != nil {
		next := positive("next_event_rate", cfg.NextEventRate, maxRate, first)
		if next != first && len(errs) == 0 {
			errs = append(errs, connector.Errorf("next_event_rate",
				"%d differs from first_event_rate %d: the reference generator times events by the first rate only", next, first))
		}
	}
	c.delayUs = 1e6 / float64(first)
	return c, errs
}

// timeLayout is how base_time is written and logged.
const timeLayout = "2006-01-02 15:04:05.000"

// parseTime reads a base time in UTC: a timestamp text, with or without
// fractions of a second, or RFC 3339.
func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", time.RFC3339Nano} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a timestamp such as 2024-01-01 00:00:00 (UTC) or RFC 3339", s)
}

// checkSchema refuses a schema other than the nexmark DDL's physical
// columns: the rows are made for exactly those.
func checkSchema(env connector.SourceEnv) error {
	for i, m := range env.Metadata {
		if m != "" {
			return connector.Errorf("schema", "nexmark has no metadata; column %q asks for %q", env.Schema.Fields[i].Name, m)
		}
	}
	want := wantSchema()
	got := env.Schema.Fields
	same := len(got) == len(want)
	for i := 0; same && i < len(got); i++ {
		same = got[i].Name == want[i].Name && got[i].Type.Nullable().String() == want[i].Type.String()
	}
	if same {
		return nil
	}
	var have []string
	for _, f := range got {
		have = append(have, f.Name+" "+f.Type.String())
	}
	return connector.Errorf("schema", "nexmark makes the nexmark DDL's columns, in order: %s (computed columns such as dateTime may follow); got %s",
		strings.Join(Columns, ", "), strings.Join(have, ", "))
}

// wantSchema is Columns parsed.
func wantSchema() []row.Field {
	fields := make([]row.Field, len(Columns))
	for i, c := range Columns {
		name, typ, _ := strings.Cut(c, " ")
		t, err := row.ParseType(typ)
		if err != nil {
			panic(fmt.Sprintf("nexmark column %q: %v", c, err))
		}
		fields[i] = row.Field{Name: name, Type: t}
	}
	return fields
}

// appendEvent appends the encoding of e's ROW (person, auction or bid), as
// row.StructValue makes it, to dst.
func appendEvent(dst []byte, e *event) []byte {
	ts := row.TimestampValue(e.ts * 1000)
	switch e.typ {
	case typePerson:
		p := &e.person
		return appendFields(dst, row.BigIntValue(p.id), row.StringValue(p.name), row.StringValue(p.email),
			row.StringValue(p.creditCard), row.StringValue(p.city), row.StringValue(p.state), ts, row.StringValue(p.extra))
	case typeAuction:
		a := &e.auction
		return appendFields(dst, row.BigIntValue(a.id), row.StringValue(a.itemName), row.StringValue(a.desc),
			row.BigIntValue(a.initialBid), row.BigIntValue(a.reserve), ts, row.TimestampValue(a.expires*1000),
			row.BigIntValue(a.seller), row.BigIntValue(a.category), row.StringValue(a.extra))
	default:
		b := &e.bid
		return appendFields(dst, row.BigIntValue(b.auction), row.BigIntValue(b.bidder), row.BigIntValue(b.price),
			row.StringValue(b.channel), row.StringValue(b.url), ts, row.StringValue(b.extra))
	}
}

func appendFields(dst []byte, fields ...row.Value) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(fields)))
	for _, v := range fields {
		dst = row.AppendValue(dst, v)
	}
	return dst
}
