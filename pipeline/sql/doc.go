// Package sql parses etld's SQL, a subset of Flink SQL, into an AST that
// the planner binds and the expression compiler compiles. It imports only
// pipeline/row (for the types in CAST and literals).
//
// # Grammar
//
//	query      := select {(UNION | INTERSECT | EXCEPT) [ALL | DISTINCT] select} [;]  (a select may be parenthesised; INTERSECT binds tighter)
//	select     := SELECT [DISTINCT | ALL] item {, item} FROM from
//	              [WHERE expr] [GROUP BY group {, group}] [HAVING expr]
//	group      := expr | GROUPING SETS (set {, set}) | ROLLUP (set {, set}) | CUBE (set {, set})
//	set        := expr | ( [expr {, expr}] )
//	item       := * | name.* | expr [[AS] alias]
//	from       := name [[AS] alias] | ( query ) [[AS] alias]
//	            | TABLE(TUMBLE(TABLE name, DESCRIPTOR(col), size [, offset])) [[AS] alias]
//	            | TABLE(HOP(TABLE name, DESCRIPTOR(col), slide, size [, offset])) ...
//	            | TABLE(CUMULATE(TABLE name, DESCRIPTOR(col), step, size [, offset])) ...
//	              (or with named arguments DATA =>, TIMECOL =>, SIZE =>, SLIDE =>,
//	              STEP =>, OFFSET => in any order)
//
// Expressions follow Calcite's precedence, lowest first: OR; AND; NOT;
// comparisons (= <> != < <= > >=, IS [NOT] NULL|TRUE|FALSE|UNKNOWN,
// [NOT] BETWEEN, [NOT] IN (list), [NOT] LIKE [ESCAPE]); + -; * / % ||;
// unary - +. Note that || binds as tightly as * (as in Flink), not like +.
// Primaries: number, string, X'hex', DATE '...', TIMESTAMP '...', INTERVAL
// '...' unit [TO unit], TRUE FALSE NULL UNKNOWN, names (t.col, `quoted`),
// calls f(args), COUNT(*), agg(DISTINCT x), agg(...) FILTER (WHERE cond)
// (the planner refuses FILTER after a non-aggregate), CAST and TRY_CAST, CASE, TRIM,
// SUBSTRING(s FROM i FOR n), POSITION(a IN b), EXTRACT(unit FROM x),
// TIMESTAMPADD(unit, n, t), TIMESTAMPDIFF(unit, a, b) and FLOOR / CEIL /
// CEILING(x TO unit) (Call.Unit), the
// clauses of JSON_VALUE, JSON_QUERY, JSON_EXISTS, JSON_OBJECT and
// JSON_ARRAY (Call.JSON) and CURRENT_TIMESTAMP, CURRENT_DATE,
// LOCALTIMESTAMP (no parentheses). Interval units are SECOND, MINUTE,
// HOUR, DAY (day-time) and YEAR, MONTH (year-month, IntervalLit.Months).
//
// A call may carry OVER (PARTITION BY ... ORDER BY ... [frame]) or OVER w
// with a WINDOW clause (*Over, parse_over.go, parse_frame.go).
//
// ORDER BY, LIMIT and the like are
// recognised and refused with "... is not
// supported yet" at their keyword.
//
// # Walking the tree
//
// Every Expr exposes its children: Children lists them and MapChildren
// copies the node with each one replaced, so a walk or a rewrite over
// expressions is one generic function rather than a type switch that must
// learn every new node. children.go says what is a child and what is not
// (a subquery, the call under OVER itself, a frame's bound).
//
// # Where etld is more lenient than Flink
//
// Flink (Calcite) reserves several hundred words; etld reserves only the
// words that shape a query (SELECT, FROM, AND, CASE, ...), so common column
// names such as value, timestamp, date, count, year or offset work
// unquoted. INTERVAL '100' SECOND is accepted without Flink's SECOND(3)
// precision. Format writes backquotes and precisions wherever Flink needs
// them, so the SQL etld prints (for explain or an export to Flink) stays
// valid Flink SQL.
//
// # Errors
//
// The parser never panics. Every failure is an *Error whose Pos is a line
// and column inside the SQL text (see Pos.Shift to place it in the file
// that embeds the text) and whose Snippet shows the line with a caret.
package sql
