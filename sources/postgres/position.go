package postgres

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/jackc/pglogrepl"

	"github.com/etld/etld/internal/pgvalue"
	"github.com/etld/etld/pipeline/row"
)

// position is what a checkpoint keeps of the source (Position, Restore).
//
// A table's snapshot is read in primary key order, in segments: a
// segment holds the rows whose key is above the previous segment's up
// to its own UpTo (the rest of the table when UpTo is nil), as the
// snapshot at LSN showed them. A run restored in the middle of a table's
// snapshot takes a new snapshot for the rest of it: a new segment. A
// change of the stream is applied to a row only when its transaction
// committed at or after the LSN of the segment that holds the row's key:
// an earlier one is in that snapshot already. So the snapshot and the
// stream add up to every change once, however many runs read them.
//
// In the stream, Done is the end of the last transaction whose changes
// were all handed on (or a point past it the server said it had sent
// everything up to, while no transaction was open); Txn and Handed are
// the transaction being handed on, by its commit LSN, and how many of its
// changes were. A restored run skips what these say it handed on.
type position struct {
	// Phase is "snapshot" while tables are being read, "stream" after.
	Phase  string     `json:"phase"`
	Slot   string     `json:"slot,omitempty"`
	Tables []tablePos `json:"tables"`
	Done   string     `json:"done,omitempty"`
	Txn    string     `json:"txn,omitempty"`
	Handed int        `json:"handed,omitempty"`
}

// tablePos is one table's part of a position.
type tablePos struct {
	Name     string    `json:"name"`
	Segments []segment `json:"segments,omitempty"`
	// Snapshot in progress: the snapshot's LSN and the key of the last
	// row handed on (nil: none yet).
	LSN  string   `json:"lsn,omitempty"`
	Last []string `json:"last,omitempty"`
	Done bool     `json:"done,omitempty"`
	// Columns is the table's definition as last seen (name type/typmod),
	// so that a restored run tells a change made while it was away.
	Columns []string `json:"columns,omitempty"`
}

// segment is a part of a table's snapshot (see position).
type segment struct {
	UpTo []string `json:"up_to,omitempty"`
	LSN  string   `json:"lsn"`
}

const (
	phaseSnapshot = "snapshot"
	phaseStream   = "stream"
)

func parseLSN(s string) (pglogrepl.LSN, error) {
	if s == "" {
		return 0, nil
	}
	return pglogrepl.ParseLSN(s)
}

func decodePosition(b []byte) (*position, error) {
	var p position
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("not a postgres source position: %w", err)
	}
	if p.Phase != phaseSnapshot && p.Phase != phaseStream {
		return nil, fmt.Errorf("not a postgres source position: phase %q", p.Phase)
	}
	for _, s := range []string{p.Done, p.Txn} {
		if _, err := parseLSN(s); err != nil {
			return nil, fmt.Errorf("not a postgres source position: %w", err)
		}
	}
	for _, t := range p.Tables {
		for _, sg := range t.Segments {
			if _, err := parseLSN(sg.LSN); err != nil {
				return nil, fmt.Errorf("not a postgres source position: table %s: %w", t.Name, err)
			}
		}
	}
	return &p, nil
}

// keyKind is how a primary key column's values order: as PostgreSQL
// orders them in ORDER BY (text columns with COLLATE "C", which is the
// order of their bytes).
type keyKind uint8

const (
	keyInt keyKind = iota + 1
	keyText
	keyNumeric
	keyDate        // days
	keyTimestamp   // microseconds
	keyTimestampTZ // microseconds
	keyBool
	keyBytes
)

// keyKindOf is the kind of a key column of type c, 0 when the source
// cannot order its values as PostgreSQL does (the table's snapshot is
// then read in one piece).
func keyKindOf(c pgvalue.Column) keyKind {
	if c.Array {
		return 0
	}
	switch c.Base {
	case "int2", "int4", "int8", "oid":
		return keyInt
	case "text", "varchar", "uuid":
		return keyText
	case "numeric":
		return keyNumeric
	case "date":
		return keyDate
	case "timestamp":
		return keyTimestamp
	case "timestamptz":
		return keyTimestampTZ
	case "bool":
		return keyBool
	case "bytea":
		return keyBytes
	}
	return 0
}

// collated reports whether ORDER BY must name COLLATE "C" for the kind.
func collated(c pgvalue.Column) bool { return c.Base == "text" || c.Base == "varchar" }

// keyPart is one key column's value in comparable form.
type keyPart struct {
	i int64
	s string
	r *big.Rat
}

// parseKey reads a key's texts (PostgreSQL's output of each column).
func parseKey(texts []string, kinds []keyKind) ([]keyPart, error) {
	out := make([]keyPart, len(texts))
	for i, t := range texts {
		var err error
		switch kinds[i] {
		case keyInt:
			var v row.Value
			v, err = row.ParseText(t, row.Of(row.BigInt))
			out[i].i = v.Int64()
		case keyText:
			out[i].s = t
		case keyNumeric:
			r, ok := new(big.Rat).SetString(t)
			if !ok {
				err = fmt.Errorf("numeric key %q", t)
			}
			out[i].r = r
		case keyDate:
			var v row.Value
			v, err = pgvalue.Parse(t, row.Of(row.Date), pgvalue.Column{})
			out[i].i = int64(v.Days())
		case keyTimestamp, keyTimestampTZ:
			typ := row.Type{ID: row.Timestamp, Precision: 6}
			if kinds[i] == keyTimestampTZ {
				typ.ID = row.TimestampLTZ
			}
			var v row.Value
			v, err = pgvalue.Parse(t, typ, pgvalue.Column{})
			out[i].i = v.Micros()
		case keyBool:
			out[i].i = 0
			if t == "t" {
				out[i].i = 1
			}
		case keyBytes:
			var v row.Value
			v, err = pgvalue.Parse(t, row.Of(row.Bytes), pgvalue.Column{})
			out[i].s = v.Str()
		default:
			err = fmt.Errorf("a key column of no known order")
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// compareKeys orders two keys of the same kinds.
func compareKeys(a, b []keyPart, kinds []keyKind) int {
	for i, k := range kinds {
		var c int
		switch k {
		case keyText, keyBytes:
			c = strings.Compare(a[i].s, b[i].s)
		case keyNumeric:
			c = a[i].r.Cmp(b[i].r)
		default:
			switch {
			case a[i].i < b[i].i:
				c = -1
			case a[i].i > b[i].i:
				c = 1
			}
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// window is a table's snapshot segments in the form the stream checks
// changes against: bounds in key order, each with its snapshot's LSN.
type window struct {
	upTo [][]keyPart // nil: the rest of the table
	lsn  []pglogrepl.LSN
	// max is the largest LSN: a transaction committed at or after it is
	// applied to every row.
	max pglogrepl.LSN
}

func newWindow(segs []segment, kinds []keyKind) (window, error) {
	var w window
	for _, sg := range segs {
		lsn, err := parseLSN(sg.LSN)
		if err != nil {
			return w, err
		}
		var k []keyPart
		if sg.UpTo != nil {
			if k, err = parseKey(sg.UpTo, kinds); err != nil {
				return w, err
			}
		}
		w.upTo = append(w.upTo, k)
		w.lsn = append(w.lsn, lsn)
		w.max = max(w.max, lsn)
	}
	return w, nil
}

// inSnapshot reports whether the snapshot already holds the effect of a
// transaction that committed at commit on the row of key: the segment
// holding the key was read at or after it.
func (w *window) inSnapshot(commit pglogrepl.LSN, key []keyPart, kinds []keyKind) bool {
	if commit >= w.max {
		return false
	}
	for i, up := range w.upTo {
		if up == nil || compareKeys(key, up, kinds) <= 0 {
			return commit < w.lsn[i]
		}
	}
	// Above every bound: no segment holds it (a snapshot still being
	// read never reaches the stream).
	return false
}
