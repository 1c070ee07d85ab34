package plan

import (
	"slices"
	"strings"
)

// Changelog is a table's changelog mode: insert-only or updating, and the
// upsert key that identifies a row (Flink's ChangelogMode and upsert keys).
type Changelog struct {
	Updating bool
	// Key holds the upsert key's column indices. HasKey false means no
	// key is known; HasKey with an empty Key is the one-row table of a
	// global aggregate.
	Key    []int
	HasKey bool
	// Alt are further upsert keys besides Key (Flink's FlinkRelMdUpsertKeys
	// gives a set: a join is keyed by each side's key and by both
	// together). An upsert sink may be keyed by Key or any of them.
	Alt [][]int
}

// keys returns every upsert key: Key first, then Alt.
func (c Changelog) keys() [][]int {
	if !c.HasKey {
		return nil
	}
	return append([][]int{c.Key}, c.Alt...)
}

// InsertOnly is the mode of sources and window aggregates.
var InsertOnly = Changelog{}

// Kinds is Flink's EXPLAIN CHANGELOG_MODE notation: [I] or [I,UB,UA,D].
func (c Changelog) Kinds() string {
	if c.Updating {
		return "[I,UB,UA,D]"
	}
	return "[I]"
}

// keyText names the key columns of schema names.
func (c Changelog) keyText(names []string) string {
	if !c.HasKey {
		return "none"
	}
	return c.keysText(names)
}

// The rules by which each operator derives its output's changelog mode
// from its input's, one function per operator, as Flink's
// FlinkChangelogModeInferenceProgram does.

// scanMode: a source is insert-only, unless its format is a changelog
// format (debezium-json, canal-json, maxwell-json, ogg-json), whatever the
// connector: then it is updating (connector.UpdatingSource). A declared
// key is kept.
func scanMode(updating bool, declaredKey []int) Changelog {
	c := Changelog{Updating: updating}
	if declaredKey != nil {
		c.Key, c.HasKey = declaredKey, true
	}
	return c
}

// calcMode: projection and filter keep the input's mode (a filter over an
// updating input also emits -D, which updating already includes); the key
// survives when every key column is projected as a plain column. colMap
// maps input column → output column (-1 when dropped).
func calcMode(in Changelog, colMap []int) Changelog {
	out := Changelog{Updating: in.Updating}
	for _, k := range in.keys() {
		if m, ok := mapKey(k, colMap); ok {
			if out.HasKey {
				out.Alt = append(out.Alt, m)
			} else {
				out.Key, out.HasKey = m, true
			}
		}
	}
	return out
}

// mapKey maps key's columns through colMap; ok is false when one is dropped.
func mapKey(key, colMap []int) ([]int, bool) {
	out := make([]int, 0, len(key))
	for _, k := range key {
		if k >= len(colMap) || colMap[k] < 0 {
			return nil, false
		}
		out = append(out, colMap[k])
	}
	return out, true
}

// groupAggMode: a GROUP BY without window is updating, keyed by the group
// columns (the first nKeys output columns); without GROUP BY it is the
// one-row global aggregate. In batch execution every result is final.
func groupAggMode(nKeys int, batch bool) Changelog {
	key := make([]int, nKeys)
	for i := range key {
		key[i] = i
	}
	return Changelog{Updating: !batch, Key: key, HasKey: true}
}

// windowAggMode: a window aggregate is insert-only, keyed by its group
// columns plus window_start and window_end.
func windowAggMode(key []int) Changelog {
	return Changelog{Key: key, HasKey: true}
}

// distinctMode: SELECT DISTINCT over an insert-only input is insert-only,
// keyed by all columns; over an updating one it is a group aggregate.
func distinctMode(width int, inUpdating, batch bool) Changelog {
	c := groupAggMode(width, batch)
	if !inUpdating {
		c.Updating = false
	}
	return c
}

// unionMode: UNION ALL is updating when any input is, and has no upsert
// key (Flink's FlinkRelMdUpsertKeys gives a union none): a key of one
// input says nothing of the rows of another.
func unionMode(ins []Changelog) Changelog {
	out := Changelog{}
	for _, in := range ins {
		out.Updating = out.Updating || in.Updating
	}
	return out
}

// matchesKey reports whether a declared key (names) is one of c's upsert keys.
func (c Changelog) matchesKey(declared []string, names []string) bool {
	for _, k := range c.keys() {
		if sameKey(declared, k, names) {
			return true
		}
	}
	return false
}

// keysText names every upsert key of c: [a] or [a] or [a, b].
func (c Changelog) keysText(names []string) string {
	var out []string
	for _, k := range c.keys() {
		out = append(out, keyNames(k, names))
	}
	return strings.Join(out, " or ")
}

// sameKey reports whether a declared key (names) equals the derived key.
func sameKey(declared []string, derived []int, names []string) bool {
	if len(declared) != len(derived) {
		return false
	}
	have := make([]string, len(derived))
	for i, k := range derived {
		have[i] = strings.ToLower(names[k])
	}
	for _, d := range declared {
		if !slices.Contains(have, strings.ToLower(d)) {
			return false
		}
	}
	return true
}

func keyNames(key []int, names []string) string {
	return "[" + strings.Join(keyList(key, names), ", ") + "]"
}

func keyList(key []int, names []string) []string {
	out := make([]string, len(key))
	for i, k := range key {
		out[i] = names[k]
	}
	return out
}

// rankMode: a Top-N is updating (insert-only in batch execution), keyed
// as Flink's FlinkRelMdUpsertKeys keys a Rank: a top-1 ROW_NUMBER by its
// partition key; with the rank number selected (rnCol >= 0), ROW_NUMBER
// by partition key + rank number; otherwise by the input's key when it
// holds the partition key; else no key.
func rankMode(partition []int, rowNumber, top1 bool, rnCol int, in Changelog, batch bool) Changelog {
	out := Changelog{Updating: !batch}
	switch {
	case rowNumber && top1:
		out.Key, out.HasKey = partition, true
	case rowNumber && rnCol >= 0:
		out.Key, out.HasKey = append(append([]int(nil), partition...), rnCol), true
	case in.HasKey && containsAll(in.Key, partition):
		out.Key, out.HasKey = in.Key, true
	}
	return out
}

// dedupMode: deduplication is keyed by its partition key; keep-first is
// insert-only (on event time it emits at the watermark), keep-last
// updates the kept row (insert-only in batch execution).
func dedupMode(key []int, updating, batch bool) Changelog {
	return Changelog{Updating: updating && !batch, Key: key, HasKey: true}
}

func containsAll(set, sub []int) bool {
	for _, s := range sub {
		if !slices.Contains(set, s) {
			return false
		}
	}
	return true
}

// windowRankMode: a window Top-N or deduplication is insert-only, keyed as
// rankMode keys a ROW_NUMBER (the partition holds window_start and
// window_end).
func windowRankMode(partition []int, top1 bool, rnCol int, in Changelog) Changelog {
	c := rankMode(partition, true, top1, rnCol, in, true)
	c.Updating = false
	return c
}
