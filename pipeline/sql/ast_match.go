package sql

// MatchRecognize is `input MATCH_RECOGNIZE (...) [AS alias]`, Flink's row
// pattern recognition:
//
//	MATCH_RECOGNIZE (
//	  [PARTITION BY k, ...]
//	  ORDER BY rowtime [ASC] [, x [ASC|DESC] ...]
//	  [MEASURES expr AS name, ...]
//	  [ONE ROW PER MATCH | ALL ROWS PER MATCH]
//	  [AFTER MATCH SKIP (PAST LAST ROW | TO NEXT ROW | TO FIRST v | TO LAST v | TO v)]
//	  PATTERN (A B+ C*? D{2,3}) [WITHIN INTERVAL '1' HOUR]
//	  DEFINE v AS condition, ...
//	)
//
// Variable references (A.price), FIRST/LAST/PREV and aggregates are plain
// expressions here; the planner gives them their meaning.
type MatchRecognize struct {
	At          Pos // the MATCH_RECOGNIZE keyword
	Input       FromItem
	PartitionBy []Expr
	OrderBy     []*MatchOrder
	Measures    []*SelectItem
	// AllRows is ALL ROWS PER MATCH, at RowsAt (zero when the output mode
	// was not written).
	AllRows bool
	RowsAt  Pos
	Skip    SkipKind
	SkipAt  Pos   // the AFTER keyword, when written
	SkipVar Ident // the variable of SKIP TO FIRST/LAST v
	Pattern *Pattern
	Within  Expr // nil when absent
	// WithinAt is the WITHIN keyword, when Within is set.
	WithinAt Pos
	Define   []*PatternDefine
	Alias    Ident
}

// Pos returns the position of the MATCH_RECOGNIZE keyword.
func (m *MatchRecognize) Pos() Pos { return m.At }

func (*MatchRecognize) fromNode() {}

// MatchOrder is one ORDER BY item of a MATCH_RECOGNIZE.
type MatchOrder struct {
	X    Expr
	Desc bool
}

// SkipKind is the AFTER MATCH SKIP strategy. The zero SkipKind is an
// absent clause, which Flink runs as SKIP TO NEXT ROW.
type SkipKind uint8

// The strategies of AFTER MATCH SKIP.
const (
	SkipDefault SkipKind = iota
	SkipPastLastRow
	SkipToNextRow
	SkipToFirst
	SkipToLast
)

func (k SkipKind) String() string {
	switch k {
	case SkipPastLastRow:
		return "SKIP PAST LAST ROW"
	case SkipToNextRow, SkipDefault:
		return "SKIP TO NEXT ROW"
	case SkipToFirst:
		return "SKIP TO FIRST"
	case SkipToLast:
		return "SKIP TO LAST"
	}
	return "SkipKind(?)"
}

// Pattern is a PATTERN clause: a concatenation of variables, each with
// its quantifier. Flink supports no groups, alternations, PERMUTE,
// anchors or exclusions, and neither does etld.
type Pattern struct {
	At    Pos // the opening parenthesis
	Terms []*PatternTerm
}

// PatternUnbounded is PatternTerm.Max for a quantifier without an upper bound.
const PatternUnbounded = -1

// PatternTerm is one variable of a pattern with its quantifier: Min to
// Max rows (Max PatternUnbounded for none), greedy unless Reluctant. Quant is
// the quantifier as written ("" for none), for messages and Format.
type PatternTerm struct {
	Var       Ident
	Min, Max  int
	Reluctant bool
	Quant     string
	QuantAt   Pos
}

// PatternDefine is one `v AS condition` of DEFINE.
type PatternDefine struct {
	Var  Ident
	Cond Expr
}

var _ FromItem = (*MatchRecognize)(nil)
