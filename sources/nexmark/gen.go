package nexmark

import (
	"math"
	"math/bits"
	"strconv"
	"strings"
	"sync"
)

// The generator follows the reference Nexmark generator (nexmark-flink's
// generator package) draw for draw: the same SplittableRandom calls in the
// same order, so that one seed gives the reference's events. Event ids
// start at 0, one generator, no out-of-order groups: the reference's
// defaults, under which event id, event number and count so far coincide.

// Ids start above 0 so that queries find matches on small inputs.
const (
	firstAuctionID  = 1000
	firstPersonID   = 1000
	firstCategoryID = 10

	numCategories     = 5
	personIDLead      = 10
	auctionIDLead     = 10
	hotSellerRatio    = 100
	hotAuctionRatio   = 100
	hotBidderRatio    = 100
	hotChannelsRatio  = 2
	channelsNumber    = 10000
	numActivePeople   = 1000
	numInFlight       = 100
	minStringLength   = 3
	reusableExtraSize = 1 << 20
)

// Event types, as the reference's Event.Type values.
const (
	typePerson  = 0
	typeAuction = 1
	typeBid     = 2
)

var (
	usStates    = strings.Split("AZ,CA,ID,OR,WA,WY", ",")
	usCities    = strings.Split("Phoenix,Los Angeles,San Francisco,Boise,Portland,Bend,Redmond,Seattle,Kent,Cheyenne", ",")
	firstNames  = strings.Split("Peter,Paul,Luke,John,Saul,Vicky,Kate,Julie,Sarah,Deiter,Walter", ",")
	lastNames   = strings.Split("Shultz,Abrams,Spencer,White,Bartels,Walton,Smith,Jones,Noris", ",")
	hotChannels = []string{"Google", "Facebook", "Baidu", "Apple"}
)

// genConfig is the generator's settings, the reference GeneratorConfig's.
type genConfig struct {
	personProp, auctionProp, bidProp, totalProp int64
	// delayUs is the event-time distance between two events.
	delayUs                                   float64
	baseTime                                  int64 // ms since the epoch
	avgPersonSize, avgAuctionSize, avgBidSize int
	hotAuctions, hotBidders, hotSellers       int32
}

// timestamp is the event time, in ms, of event number n.
func (c *genConfig) timestamp(n int64) int64 {
	return c.baseTime + int64(float64(n)*c.delayUs)/1000
}

func (c *genConfig) lastBase0PersonID(id int64) int64 {
	epoch, off := id/c.totalProp, id%c.totalProp
	if off >= c.personProp {
		off = c.personProp - 1
	}
	return epoch*c.personProp + off
}

func (c *genConfig) lastBase0AuctionID(id int64) int64 {
	epoch, off := id/c.totalProp, id%c.totalProp
	switch {
	case off < c.personProp:
		epoch--
		off = c.auctionProp - 1
	case off >= c.personProp+c.auctionProp:
		off = c.auctionProp - 1
	default:
		off -= c.personProp
	}
	return epoch*c.auctionProp + off
}

func (c *genConfig) nextBase0PersonID(id int64, r *splitMix) int64 {
	people := c.lastBase0PersonID(id) + 1
	active := min(people, numActivePeople)
	return people - active + r.longn(active+personIDLead)
}

func (c *genConfig) nextBase0AuctionID(id int64, r *splitMix) int64 {
	last := c.lastBase0AuctionID(id)
	lo := max(last-numInFlight, 0)
	return lo + r.longn(last-lo+1+auctionIDLead)
}

// event is one generated event; only the part of its type is set.
type event struct {
	typ     int32
	ts      int64 // ms
	person  person
	auction auction
	bid     bid
}

type person struct {
	id                                   int64
	name, email, creditCard, city, state string
	extra                                string
}

type auction struct {
	id                  int64
	itemName, desc      string
	initialBid, reserve int64
	expires             int64 // ms
	seller, category    int64
	extra               string
}

type bid struct {
	auction, bidder, price int64
	channel, url, extra    string
}

// next fills e with event number id, drawing from r.
func (c *genConfig) next(id int64, r *splitMix, e *event) {
	e.ts = c.timestamp(id)
	switch rem := id % c.totalProp; {
	case rem < c.personProp:
		e.typ = typePerson
		c.nextPerson(id, r, &e.person)
	case rem < c.personProp+c.auctionProp:
		e.typ = typeAuction
		c.nextAuction(id, r, e.ts, &e.auction)
	default:
		e.typ = typeBid
		c.nextBid(id, r, &e.bid)
	}
}

func (c *genConfig) nextPerson(id int64, r *splitMix, p *person) {
	p.id = c.lastBase0PersonID(id) + firstPersonID
	p.name = firstNames[r.intn(int32(len(firstNames)))] + " " + lastNames[r.intn(int32(len(lastNames)))]
	p.email = nextString(r, 7, ' ') + "@" + nextString(r, 5, ' ') + ".com"
	var cc [19]byte
	for i := range 4 {
		if i > 0 {
			cc[i*5-1] = ' '
		}
		n := r.intn(10000)
		for j := 3; j >= 0; j-- {
			cc[i*5+j] = byte('0' + n%10)
			n /= 10
		}
	}
	p.creditCard = string(cc[:])
	p.city = usCities[r.intn(int32(len(usCities)))]
	p.state = usStates[r.intn(int32(len(usStates)))]
	size := 8 + len(p.name) + len(p.email) + len(p.creditCard) + len(p.city) + len(p.state)
	p.extra = nextExtra(r, size, c.avgPersonSize)
}

func (c *genConfig) nextAuction(id int64, r *splitMix, ts int64, a *auction) {
	a.id = c.lastBase0AuctionID(id) + firstAuctionID
	if r.intn(c.hotSellers) > 0 {
		a.seller = c.lastBase0PersonID(id) / hotSellerRatio * hotSellerRatio
	} else {
		a.seller = c.nextBase0PersonID(id, r)
	}
	a.seller += firstPersonID
	a.category = firstCategoryID + int64(r.intn(numCategories))
	a.initialBid = nextPrice(r)
	// An auction lasts on average until numInFlight auctions later.
	ahead := numInFlight * c.totalProp / c.auctionProp
	horizon := c.timestamp(id+ahead) - ts
	a.expires = ts + 1 + r.longn(max(horizon*2, 1))
	a.itemName = nextString(r, 20, ' ')
	a.desc = nextString(r, 100, ' ')
	a.reserve = a.initialBid + nextPrice(r)
	a.extra = nextExtra(r, 8+len(a.itemName)+len(a.desc)+40, c.avgAuctionSize)
}

func (c *genConfig) nextBid(id int64, r *splitMix, b *bid) {
	if r.intn(c.hotAuctions) > 0 {
		b.auction = c.lastBase0AuctionID(id) / hotAuctionRatio * hotAuctionRatio
	} else {
		b.auction = c.nextBase0AuctionID(id, r)
	}
	b.auction += firstAuctionID
	if r.intn(c.hotBidders) > 0 {
		// The second person of the batch, so hot bidders are not hot sellers.
		b.bidder = c.lastBase0PersonID(id)/hotBidderRatio*hotBidderRatio + 1
	} else {
		b.bidder = c.nextBase0PersonID(id, r)
	}
	// The reference adds the first person id twice to a bidder; kept, so
	// that bidders are the reference's.
	b.bidder += 2 * firstPersonID
	b.price = nextPrice(r)
	if r.intn(hotChannelsRatio) > 0 {
		i := r.intn(int32(len(hotChannels)))
		b.channel, b.url = hotChannels[i], statics().hotURLs[i]
	} else {
		i := r.intn(channelsNumber)
		b.channel, b.url = "channel-"+strconv.Itoa(int(i)), statics().channelURLs[i]
	}
	b.extra = nextExtra(r, 32, c.avgBidSize)
}

func nextPrice(r *splitMix) int64 {
	return javaRound(math.Pow(10, r.nextDouble()*6) * 100)
}

// nextString is a string of 3 to max-1 letters, a share of 1/13 of them
// special, trimmed of spaces as Java's trim does.
func nextString(r *splitMix, max int32, special byte) string {
	n := minStringLength + r.intn(max-minStringLength)
	b := make([]byte, n)
	for i := range b {
		if r.intn(13) == 0 {
			b[i] = special
		} else {
			b[i] = byte('a' + r.intn(26))
		}
	}
	return strings.Trim(string(b), " ")
}

// nextExtra pads an event to about avg bytes: a slice of one fixed long
// random text.
func nextExtra(r *splitMix, size, avg int) string {
	if size > avg {
		return ""
	}
	avg -= size
	delta := int32(javaRound(float64(avg) * 0.2))
	n := int32(avg) - delta
	if delta != 0 {
		n += r.intn(2 * delta)
	}
	off := r.intn(reusableExtraSize - n)
	return statics().extra[off : off+n]
}

// exactString is the reference's nextExactString without its reusable
// text: letters from each int's base-26 digits, a negative int giving the
// characters below 'a' that the reference's gives too.
func exactString(r *splitMix, n int) string {
	b := make([]byte, n)
	var v int32
	left := 0
	for i := range b {
		if left == 0 {
			v, left = r.nextInt(), 6
		}
		b[i] = byte('a' + v%26)
		v /= 26
		left--
	}
	return string(b)
}

// staticTexts are the texts the reference makes once per process from an
// unseeded generator (the extra text, the bid URLs); here from fixed
// seeds, so that they are the same on every run. Only their content, not
// the draws of the events, differs from a reference run.
type staticTexts struct {
	extra       string
	hotURLs     [4]string
	channelURLs [channelsNumber]string
}

var statics = sync.OnceValue(func() *staticTexts {
	s := &staticTexts{}
	r := newSplitMix(0)
	s.extra = exactString(&r, reusableExtraSize)
	u := newSplitMix(1)
	for i := range s.hotURLs {
		s.hotURLs[i] = baseURL(&u)
	}
	for i := range s.channelURLs {
		url := baseURL(&u)
		if u.intn(10) > 0 {
			rev := int32(bits.Reverse32(uint32(i)))
			if rev < 0 {
				rev = -rev // Math.abs: MinInt32 stays negative
			}
			url += "&channel_id=" + strconv.Itoa(int(rev))
		}
		s.channelURLs[i] = url
	}
	return s
})

func baseURL(r *splitMix) string {
	return "https://www.nexmark.com/" + nextString(r, 5, '_') + "/" + nextString(r, 5, '_') + "/" +
		nextString(r, 5, '_') + "/item.htm?query=1"
}

// defaultGenConfig is the reference's default configuration.
func defaultGenConfig() genConfig {
	return genConfig{
		personProp: 1, auctionProp: 3, bidProp: 46, totalProp: 50,
		delayUs:       1e6 / 10000.0,
		avgPersonSize: 200, avgAuctionSize: 500, avgBidSize: 100,
		hotAuctions: 2, hotBidders: 4, hotSellers: 4,
	}
}
