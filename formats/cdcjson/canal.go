package cdcjson

import (
	"fmt"
	"regexp"

	"github.com/etld/etld/pipeline/connector"
	"github.com/etld/etld/pipeline/row"
)

// CanalOptions are the canal-json format's options.
type CanalOptions struct {
	// TimestampFormat is as the json format's: sql (default) or iso-8601.
	TimestampFormat string `yaml:"timestamp_format"`
	// DatabaseInclude and TableInclude are Flink's
	// canal-json.database.include and canal-json.table.include: regular
	// expressions the whole "database" or "table" of a message must match
	// for its rows to be read (a Canal topic often carries many tables).
	// Other messages carry no change.
	DatabaseInclude string `yaml:"database_include"`
	TableInclude    string `yaml:"table_include"`
}

// CanalDecoder reads Canal's JSON messages:
//
//	{"data": [{...}, ...], "old": [{...}, ...], "type": "INSERT"|"UPDATE"|"DELETE",
//	 "database": "db", "table": "t", "isDdl": false, ...}
//
// INSERT gives +I of each row in "data", DELETE -D of each. UPDATE gives,
// for each row of "data", -U of the row before and +U of the row; the
// row before is the row with the members of the same element of "old"
// (the columns the update changed) put back. CREATE (a DDL message) gives
// no change, as in Flink; any other type is an error. It is not safe for
// concurrent use.
type CanalDecoder struct {
	images
	database, table *regexp.Regexp // nil: every one
	// databaseInclude and tableInclude are the patterns as written.
	databaseInclude, tableInclude string
}

// NewCanalDecoder returns a decoder of messages whose rows have schema.
func NewCanalDecoder(o CanalOptions, schema row.Schema) (*CanalDecoder, error) {
	c, err := Options{TimestampFormat: o.TimestampFormat}.codec(schema)
	if err != nil {
		return nil, err
	}
	d := &CanalDecoder{images: images{codec: c}, databaseInclude: o.DatabaseInclude, tableInclude: o.TableInclude}
	if d.database, err = anchored("database_include", o.DatabaseInclude); err != nil {
		return nil, err
	}
	if d.table, err = anchored("table_include", o.TableInclude); err != nil {
		return nil, err
	}
	return d, nil
}

// newCanalEncoder checks the options as the decoder does (the filters
// only apply to reading) and returns the encoder.
func newCanalEncoder(o CanalOptions, schema row.Schema) (*Encoder, error) {
	if _, err := NewCanalDecoder(o, schema); err != nil {
		return nil, err
	}
	return newEncoder(Options{TimestampFormat: o.TimestampFormat}, schema, canalEvent)
}

// anchored compiles a pattern that must match a whole name, as Java's
// Pattern.matches does.
func anchored(field, pattern string) (*regexp.Regexp, error) {
	if pattern == "" {
		return nil, nil
	}
	re, err := regexp.Compile(`^(?:` + pattern + `)$`)
	if err != nil {
		return nil, connector.Errorf(field, "bad regular expression %q: %v", pattern, err)
	}
	return re, nil
}

var canalMembers = []string{"data", "old", "type", "database", "table"}

const (
	cData = iota
	cOld
	cType
	cDatabase
	cTable
)

// Decode appends the changes of one message to b. On error it appends
// nothing.
func (d *CanalDecoder) Decode(rec []byte, b *row.Batch) error {
	s := string(rec)
	if isTombstone(s) {
		return nil
	}
	var m [5]member
	if err := scanMessage(s, canalMembers, m[:]); err != nil {
		return &connector.DecodeError{Err: err}
	}
	for _, f := range []struct {
		re *regexp.Regexp
		at int
	}{{d.database, cDatabase}, {d.table, cTable}} {
		if f.re == nil {
			continue
		}
		name, err := readString(s, m[f.at])
		if err != nil {
			return &connector.DecodeError{Err: fmt.Errorf("%q: %w", canalMembers[f.at], err)}
		}
		if !f.re.MatchString(name) {
			return nil
		}
	}
	typ, err := readString(s, m[cType])
	if err != nil {
		return &connector.DecodeError{Err: fmt.Errorf(`"type": %w`, err)}
	}
	n := len(b.Changes)
	if err := d.changes(s, typ, m[:], b); err != nil {
		b.Changes = b.Changes[:n]
		return err
	}
	return nil
}

func (d *CanalDecoder) changes(s, typ string, m []member, b *row.Batch) error {
	switch typ {
	case "INSERT", "DELETE", "UPDATE":
	case "CREATE":
		return nil // a table was created: DDL, no rows
	case "":
		return malformed(`not a Canal message: no "type" member`)
	default:
		return malformed(`unknown "type" value %q at byte %d (want INSERT, UPDATE or DELETE; CREATE is skipped)`, typ, m[cType].pos)
	}
	if m[cData].nullOrAbsent(s) {
		return malformed(`type %s needs the rows in "data", which is null or missing`, typ)
	}
	data, err := elements(s, m[cData], "data")
	if err != nil {
		return &connector.DecodeError{Err: err}
	}
	var old []member
	if typ == "UPDATE" {
		if m[cOld].nullOrAbsent(s) {
			return malformed(`type UPDATE needs the old values in "old", which is null or missing`)
		}
		if old, err = elements(s, m[cOld], "old"); err != nil {
			return &connector.DecodeError{Err: err}
		}
		if len(old) != len(data) {
			return malformed(`type UPDATE has %d rows in "data" and %d in "old"; want one "old" per row`, len(data), len(old))
		}
	}
	for i, e := range data {
		r, err := d.image(b, s, e, fmt.Sprintf("data[%d]", i))
		if err != nil {
			return err
		}
		switch typ {
		case "INSERT":
			b.Append(row.Insert, r)
		case "DELETE":
			b.Append(row.Delete, r)
		case "UPDATE":
			before, err := d.before(b, s, old[i], r, fmt.Sprintf("old[%d]", i))
			if err != nil {
				return err
			}
			b.Append(row.UpdateBefore, before)
			b.Append(row.UpdateAfter, r)
		}
	}
	return nil
}

var _ connector.Decoder = (*CanalDecoder)(nil)
