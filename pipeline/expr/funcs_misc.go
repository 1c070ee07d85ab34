package expr

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/etld/etld/internal/javatime"
	"github.com/etld/etld/pipeline/row"
	"github.com/etld/etld/pipeline/sql"
)

// Functions that fit no other family: GREATEST and LEAST, UUID(),
// CONVERT_TZ and the SHA-2 hashes.

func init() {
	register(map[string]*funcDef{
		"GREATEST":   {min: 1, max: -1, build: buildExtreme(greater)},
		"LEAST":      {min: 1, max: -1, build: buildExtreme(less)},
		"UUID":       {min: 0, max: 0, build: buildUUID},
		"CONVERT_TZ": {min: 3, max: 3, build: buildConvertTZ},
		"SHA224":     {min: 1, max: 1, build: hashFunc(func(b []byte) []byte { s := sha256.Sum224(b); return s[:] })},
		"SHA384":     {min: 1, max: 1, build: hashFunc(func(b []byte) []byte { s := sha512.Sum384(b); return s[:] })},
		"SHA512":     {min: 1, max: 1, build: hashFunc(func(b []byte) []byte { s := sha512.Sum512(b); return s[:] })},
		"SHA2":       {min: 2, max: 2, build: buildSHA2},
	})
}

// buildExtreme is GREATEST(v, ...) (want greater) and LEAST(v, ...) (want
// less): the arguments are brought to their common type, and any NULL
// argument makes the result NULL, as Flink documents.
func buildExtreme(want int) builder {
	return func(c *compiler, e *sql.Call, args []*node) (*node, error) {
		t, err := c.unify(e.Name, args)
		if err != nil {
			return nil, err
		}
		if t.ID == row.Null {
			return nullNode(e, row.Type{ID: row.String}, args...), nil
		}
		dom, err := compareDomain(t, t)
		if err != nil || t.ID == row.Bytes {
			return nil, errAt(e.At, "%s cannot order values of type %s", e.Name, typeName(t))
		}
		var ord func(a, b row.Value) int
		switch dom {
		case domInt:
			ord = ordIntV
		case domFloat:
			ord = ordFloatV
		case domDec:
			ord = ordDec
		default:
			ord = ordStrV
		}
		evs := make([]evalFn, len(args))
		for i, a := range args {
			evs[i] = a.eval
		}
		f := func(r row.Row) (row.Value, error) {
			var best row.Value
			for i, ev := range evs {
				v, err := ev(r)
				if err != nil || v.IsNull() {
					return row.NullValue, err
				}
				if i == 0 || ord(v, best) == want {
					best = v
				}
			}
			return best, nil
		}
		return c.finish(e, t, f, args...)
	}
}

// buildUUID is UUID(): a random (version 4) UUID as text. It is
// non-deterministic like the clock functions: never folded, and named in
// Compiled.Clock so that a run replaying the same records is not taken
// to give the same rows.
func buildUUID(c *compiler, e *sql.Call, args []*node) (*node, error) {
	return c.volatile(e, row.Type{ID: row.String, NotNull: true}, func(row.Row) (row.Value, error) {
		var u [16]byte
		if _, err := rand.Read(u[:]); err != nil {
			return row.NullValue, fmt.Errorf("UUID(): %w", err)
		}
		u[6] = u[6]&0x0f | 0x40
		u[8] = u[8]&0x3f | 0x80
		var b [36]byte
		hex.Encode(b[0:8], u[0:4])
		b[8] = '-'
		hex.Encode(b[9:13], u[4:6])
		b[13] = '-'
		hex.Encode(b[14:18], u[6:8])
		b[18] = '-'
		hex.Encode(b[19:23], u[8:10])
		b[23] = '-'
		hex.Encode(b[24:], u[10:])
		return row.StringValue(string(b[:])), nil
	}), nil
}

// buildSHA2 is SHA2(s, bits) with bits 224, 256, 384 or 512; NULL when
// either argument is, and (as in Flink) NULL for any other length.
func buildSHA2(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING or BYTES", func(t row.Type) bool { return isStringy(t) || t.ID == row.Bytes }, 0); err != nil {
		return nil, err
	}
	if err := check(e, args, "an integer", isInteger, 1); err != nil {
		return nil, err
	}
	return c.fn2(e, row.Type{ID: row.String}, args[0], args[1], func(s, n row.Value) (row.Value, error) {
		var sum []byte
		b := []byte(s.Str())
		switch n.Int64() {
		case 224:
			h := sha256.Sum224(b)
			sum = h[:]
		case 256:
			h := sha256.Sum256(b)
			sum = h[:]
		case 384:
			h := sha512.Sum384(b)
			sum = h[:]
		case 512:
			h := sha512.Sum512(b)
			sum = h[:]
		default:
			return row.NullValue, nil
		}
		return row.StringValue(hex.EncodeToString(sum)), nil
	})
}

// zoneCache remembers the time zones CONVERT_TZ has loaded: loading reads
// the tz database from disk.
var zoneCache sync.Map // name -> *time.Location

// loadZone reads a zone as Java's TimeZone.getTimeZone does: a region
// name (Europe/Berlin), an old three-letter id (PST), UTC/GMT, or a
// custom offset GMT+hh:mm / GMT-hh (also written UTC+hh:mm or +hh:mm). ok is false for any other text,
// where Java silently falls back to GMT; etld gives NULL instead of a
// wrong time.
func loadZone(name string) (*time.Location, bool) {
	if l, ok := zoneCache.Load(name); ok {
		return l.(*time.Location), true
	}
	var loc *time.Location
	switch up := strings.ToUpper(name); {
	case up == "UTC" || up == "GMT" || up == "Z":
		loc = time.UTC
	case strings.HasPrefix(up, "GMT") || strings.HasPrefix(up, "UTC") || strings.HasPrefix(up, "+") || strings.HasPrefix(up, "-"):
		off, ok := parseOffset(strings.TrimPrefix(strings.TrimPrefix(up, "GMT"), "UTC"))
		if !ok {
			return nil, false
		}
		loc = time.FixedZone(name, off)
	case javaShortZones[up] != "":
		l, err := time.LoadLocation(javaShortZones[up])
		if err != nil {
			return nil, false
		}
		loc = l
	default:
		l, err := time.LoadLocation(name)
		if err != nil || name == "" || name == "Local" {
			return nil, false
		}
		loc = l
	}
	zoneCache.Store(name, loc)
	return loc, true
}

// javaShortZones are the three-letter ids java.util.TimeZone still
// accepts (its old mapping: EST, MST and HST fixed offsets, the others
// regions).
var javaShortZones = map[string]string{
	"ACT": "Australia/Darwin", "AET": "Australia/Sydney", "AGT": "America/Argentina/Buenos_Aires",
	"ART": "Africa/Cairo", "AST": "America/Anchorage", "BET": "America/Sao_Paulo",
	"BST": "Asia/Dhaka", "CAT": "Africa/Harare", "CNT": "America/St_Johns",
	"CST": "America/Chicago", "CTT": "Asia/Shanghai", "EAT": "Africa/Addis_Ababa",
	"ECT": "Europe/Paris", "IET": "America/Indiana/Indianapolis", "IST": "Asia/Kolkata",
	"JST": "Asia/Tokyo", "MIT": "Pacific/Apia", "NET": "Asia/Yerevan",
	"NST": "Pacific/Auckland", "PLT": "Asia/Karachi", "PNT": "America/Phoenix",
	"PRT": "America/Puerto_Rico", "PST": "America/Los_Angeles", "SST": "Pacific/Guadalcanal",
	"VST": "Asia/Ho_Chi_Minh", "EST": "Etc/GMT+5", "MST": "Etc/GMT+7", "HST": "Etc/GMT+10",
}

// parseOffset reads +h, +hh, +hh:mm or +hhmm into seconds east of UTC.
func parseOffset(s string) (int, bool) {
	if len(s) < 2 || (s[0] != '+' && s[0] != '-') {
		return 0, false
	}
	sign := 1
	if s[0] == '-' {
		sign = -1
	}
	s = s[1:]
	h, m := s, "0"
	if i := strings.IndexByte(s, ':'); i >= 0 {
		h, m = s[:i], s[i+1:]
	} else if len(s) == 4 {
		h, m = s[:2], s[2:]
	}
	hv, ok1 := smallInt(h)
	mv, ok2 := smallInt(m)
	if !ok1 || !ok2 || len(h) > 2 || len(m) > 2 || hv > 23 || mv > 59 {
		return 0, false
	}
	return sign * (hv*3600 + mv*60), true
}

func smallInt(s string) (int, bool) {
	if s == "" || len(s) > 2 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// buildConvertTZ is CONVERT_TZ(text, from_zone, to_zone): the wall time
// text ('yyyy-MM-dd HH:mm:ss') read in from_zone, written in to_zone.
// Text that does not parse, or an unknown zone, gives NULL.
func buildConvertTZ(c *compiler, e *sql.Call, args []*node) (*node, error) {
	if err := check(e, args, "a STRING", isStringy); err != nil {
		return nil, err
	}
	for i := 1; i <= 2; i++ {
		if a := args[i]; a.konst && !a.val.IsNull() {
			if _, ok := loadZone(a.val.Str()); !ok {
				return nil, errAt(a.e.Pos(), "CONVERT_TZ: unknown time zone %q (use a region such as Europe/Berlin, UTC, or an offset GMT+01:00)", a.val.Str())
			}
		}
	}
	df, _ := javatime.Compile(defaultTimestampFormat)
	return c.fn3(e, row.Type{ID: row.String}, args[0], args[1], args[2], func(s, from, to row.Value) (row.Value, error) {
		fl, ok1 := loadZone(from.Str())
		tl, ok2 := loadZone(to.Str())
		if !ok1 || !ok2 {
			return row.NullValue, nil
		}
		tm, err := df.Parse(s.Str())
		if err != nil {
			return row.NullValue, nil
		}
		// tm is the wall time read as UTC; read it in fl instead.
		in := time.Date(tm.Year(), tm.Month(), tm.Day(), tm.Hour(), tm.Minute(), tm.Second(), tm.Nanosecond(), fl)
		out := in.In(tl)
		wall := time.Date(out.Year(), out.Month(), out.Day(), out.Hour(), out.Minute(), out.Second(), out.Nanosecond(), time.UTC)
		var buf [32]byte
		return row.StringValue(string(df.Format(buf[:0], wall))), nil
	})
}
