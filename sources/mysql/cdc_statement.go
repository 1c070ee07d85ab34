package mysql

import (
	"fmt"
	"slices"
	"strings"

	"github.com/go-mysql-org/go-mysql/replication"
)

// checkStatement fails on a statement the binlog gives for a captured
// table whose changes the row events do not carry (a truncate, a drop or
// rename, a change logged as a statement) and logs a schema change the
// table maps will show.
func (s *CDC) checkStatement(schema, q string, h *replication.EventHeader) error {
	words := sqlWords(q)
	if len(words) < 2 {
		return nil
	}
	verb, object := words[0], words[1]
	for _, ti := range s.info {
		at := binlogPos{File: s.bl.cur.File, Pos: h.LogPos - h.EventSize}
		if verb == "drop" && (object == "database" || object == "schema") && len(words) > 2 &&
			strings.EqualFold(words[len(words)-1], ti.name.db) {
			return fmt.Errorf("the database of table %s was dropped at %s (%s): its rows' deletions are not in the binlog; reset the pipeline's state (etld state reset) to take a new snapshot", ti.name, at, clip(q))
		}
		if !mentions(words, ti.name, schema) {
			continue
		}
		switch {
		case verb == "alter" && renamesTable(words):
			return fmt.Errorf("table %s was renamed at %s (%s): its changes are no longer logged under its name; capture the new name from a new snapshot (reset the pipeline's state (etld state reset))", ti.name, at, clip(q))
		case verb == "alter":
			s.logger.Info("schema change of a captured table: its changes are read by column name from here on", "table", ti.name.String(), "at", at.String(), "statement", clip(q))
		case verb == "truncate":
			return fmt.Errorf("table %s was truncated at %s: the binlog does not log its rows' deletions, so the capture would keep them; reset the pipeline's state (etld state reset) to take a new snapshot", ti.name, at)
		case verb == "drop" && object == "table":
			return fmt.Errorf("table %s was dropped at %s (%s): its rows' deletions are not in the binlog; reset the pipeline's state (etld state reset) to take a new snapshot", ti.name, at, clip(q))
		case verb == "rename":
			return fmt.Errorf("table %s was renamed at %s (%s): its changes are no longer logged under its name; capture the new name from a new snapshot (reset the pipeline's state (etld state reset))", ti.name, at, clip(q))
		case verb == "insert" || verb == "update" || verb == "delete" || verb == "replace" || verb == "load":
			if mentions(dmlTarget(words), ti.name, schema) {
				return fmt.Errorf("a change of table %s at %s was logged as a statement (%s), not as rows: its session ran with binlog_format other than ROW; the capture cannot read it", ti.name, at, clip(q))
			}
		}
	}
	return nil
}

// renamesTable reports whether an ALTER TABLE renames the table (RENAME
// [TO|AS] name), not a column, index or key.
func renamesTable(words []string) bool {
	for i, w := range words {
		if w == "rename" && i+1 < len(words) {
			switch words[i+1] {
			case "column", "index", "key":
				continue
			}
			return true
		}
	}
	return false
}

// dmlTarget is the words naming the table a DML statement changes: after
// INTO (INSERT, REPLACE, LOAD DATA), after FROM (DELETE), or after the
// verb and its modifiers (UPDATE).
func dmlTarget(words []string) []string {
	at := 1
	switch words[0] {
	case "insert", "replace", "load":
		at = slices.Index(words, "into") + 1
	case "delete":
		at = slices.Index(words, "from") + 1
	}
	for at > 0 && at < len(words) && (words[at] == "low_priority" || words[at] == "ignore" || words[at] == "quick") {
		at++
	}
	if at <= 0 || at >= len(words) {
		return nil
	}
	end := at + 1
	if end+1 < len(words) && words[end] == "." {
		end += 2
	}
	return words[at:end]
}

// sqlWords splits a statement into lower-case words and identifiers
// (backquotes removed) and the dots between them; comments are left
// out.
func sqlWords(q string) []string {
	var out []string
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			end := strings.Index(q[i+2:], "*/")
			if end < 0 {
				return out
			}
			i += end + 4
		case c == '-' && strings.HasPrefix(q[i:], "-- "), c == '#':
			end := strings.IndexByte(q[i:], '\n')
			if end < 0 {
				return out
			}
			i += end
		case c == '`':
			end := strings.IndexByte(q[i+1:], '`')
			if end < 0 {
				return out
			}
			out = append(out, strings.ToLower(q[i+1:i+1+end]))
			i += end + 2
		case c == '.':
			out = append(out, ".")
			i++
		case c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
			j := i
			for j < len(q) && (q[j] == '_' || q[j] == '$' || q[j] >= '0' && q[j] <= '9' || q[j] >= 'a' && q[j] <= 'z' || q[j] >= 'A' && q[j] <= 'Z' || q[j] >= 0x80) {
				j++
			}
			out = append(out, strings.ToLower(q[i:j]))
			i = j
		case c == '\'' || c == '"':
			end := strings.IndexByte(q[i+1:], c)
			if end < 0 {
				return out
			}
			i += end + 2
		default:
			i++
		}
	}
	return out
}

// mentions reports whether the words name table t, qualified or in the
// statement's default database schema.
func mentions(words []string, t tableName, schema string) bool {
	name, db := strings.ToLower(t.name), strings.ToLower(t.db)
	for i, w := range words {
		if w != name {
			continue
		}
		if i >= 2 && words[i-1] == "." {
			if words[i-2] == db {
				return true
			}
			continue
		}
		if strings.EqualFold(schema, t.db) {
			return true
		}
	}
	return false
}

// clip shortens a statement for a message.
func clip(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if len(q) > 200 {
		return q[:200] + "..."
	}
	return q
}
