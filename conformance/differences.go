package conformance

// Kind says why a case's etld result differs from Flink's.
type Kind int

const (
	// Deliberate: etld differs on purpose; docs/sql.md "Differences from
	// Flink" lists it with the same name and reason.
	Deliberate Kind = iota + 1
	// Pending: work in progress in the named area (on another branch): the
	// case should match once it lands, and the test then says to drop the
	// case's expect line.
	Pending
	// Open: a difference found by the suite and not fixed yet.
	Open
)

func (k Kind) String() string {
	switch k {
	case Deliberate:
		return "deliberate"
	case Pending:
		return "pending"
	case Open:
		return "open"
	}
	return "?"
}

// Difference is a named way etld's result differs from Flink's. A case
// names one in its `expect:` line; the test then checks that the case
// still differs, and, when the case has an etld.out section, that etld
// gives exactly that.
type Difference struct {
	Name   string
	Kind   Kind
	Area   string
	Reason string
}

// Differences is every named difference.
var Differences = []Difference{
	{Name: "filter-over-updating", Kind: Deliberate, Area: "plan: Calc over an updating input",
		Reason: "A filter over an updating input turns an update whose new row fails into -D of the old row, and one whose old row failed into +I of the new one; Flink passes the -U or +U alone (FLINK-9528), a retraction no upsert sink can apply by key alone."},
	{Name: "over-non-time-bounded-rows", Kind: Deliberate, Area: "plan/windowop: OVER ordered by a non-time column",
		Reason: "etld runs ROWS BETWEEN N PRECEDING AND CURRENT ROW ordered by a non-time column (Nexmark's q6 needs it); Flink refuses every bounded frame there (Non-time attribute sort is not supported for bounded OVER window)."},
	{Name: "before-epoch-millis", Kind: Deliberate, Area: "expr: epoch milliseconds to timestamps",
		Reason: "A TIMESTAMP before 1970 converts as the calendar says: 1969-12-31 23:59:59.5 has CAST AS DATE 1969-12-31, HOUR 23, SECOND 59 and CAST AS TIMESTAMP(0) 1969-12-31 23:59:59. Flink divides its negative epoch milliseconds truncating towards zero and gives 1970-01-01, 0, 0 and 1970-01-01 00:00:00."},
	{Name: "window-start-only", Kind: Deliberate, Area: "plan: window aggregates",
		Reason: "GROUP BY window_start without window_end over a window TVF is refused with an explanation; Flink silently plans an updating aggregate instead of a window aggregate, a common trap."},
	{Name: "window-join-fallback", Kind: Deliberate, Area: "plan: window joins",
		Reason: "A join of window TVFs that equates their window bounds but is no window join (the windows differ, or only one of window_start and window_end is equated, or one side has no window) is refused with the reason; Flink silently plans a regular join, whose outer results update and whose state never expires."},
	{Name: "regexp-re2", Kind: Deliberate, Area: "expr: regular expressions",
		Reason: "Regular expressions are Go's RE2: backreferences, lookaround, possessive quantifiers and atomic groups are refused (at validation when constant) rather than risk run times exponential in the input."},
	{Name: "regexp-invalid-constant", Kind: Deliberate, Area: "expr: regular expressions",
		Reason: "A constant regular expression that does not compile (REGEXP_COUNT(s, '(')) is refused at validation with the reason; Flink's REGEXP_COUNT, REGEXP_EXTRACT_ALL and REGEXP_INSTR give NULL for every row, which hides the mistake."},
	{Name: "convert-tz-unknown-zone", Kind: Deliberate, Area: "expr: CONVERT_TZ",
		Reason: "A time zone Java does not know is silently read as GMT by Flink; etld refuses a constant one at validation and gives NULL for a computed one, rather than a wrong time."},
	{Name: "cast-string-year-range", Kind: Deliberate, Area: "row: DATE and TIMESTAMP text",
		Reason: "CAST of a DATE or TIMESTAMP past the years 0000-9999 to STRING writes the year as Flink's own csv and json writers and print do (+10000-01-01 23:59:59.999, -0001-12-31); Flink's CAST writes the year's last four digits as if they were all (0000-01-01 for the year 10000) and a character past '9' for a negative one (000/-12-31), a text that reads back as another time or none."},
	{Name: "julian-before-4800", Kind: Deliberate, Area: "expr: TIMESTAMPADD and interval arithmetic",
		Reason: "TIMESTAMPADD(YEAR/MONTH, n, t) to a time before the year -4800 keeps t's day of month, as the proleptic Gregorian calendar does (0000-01-01 minus 20000 years is -20000-01-01); Flink's julian-day conversion divides a negative number truncating towards zero there and gives a day later (-20000-01-02)."},
	{Name: "debezium-schema-either", Kind: Deliberate, Area: "formats/debezium",
		Reason: "Without schema_include, debezium-json reads events with and without the Kafka Connect {schema, payload} wrapper; Flink's default (schema-include false) fails on a wrapped event."},
	{Name: "flink-job-failure", Kind: Deliberate, Area: "expr: functions Flink's generated code fails in",
		Reason: "Where Flink's job fails on a value, etld gives what its documentation says: TRUNCATE of a NULL DECIMAL is NULL (Flink: NullPointerException), SHA2 with a bit length other than 224, 256, 384 or 512 is NULL (Flink: the generated class cannot be instantiated)."},
	{Name: "json-value-returning-text", Kind: Deliberate, Area: "expr: JSON_VALUE ... RETURNING",
		Reason: "JSON_VALUE(j, path RETURNING INT) of a JSON string such as \"7\" converts the text as CAST does (7; a text that is no number goes to ON ERROR); Flink's job fails with a ClassCastException (String cannot be cast to Integer)."},
	{Name: "set-op-multiplicity", Kind: Deliberate, Area: "plan: INTERSECT ALL, EXCEPT ALL, set operations over updating inputs",
		Reason: "A set operation emits +I for each copy a row gains and -D for each it loses, so INTERSECT ALL over insert-only inputs is insert-only; Flink counts the copies in a group aggregate, filters it and replicates rows with a table function, and its filter passes the aggregate's -U and +U halves alone (a lone +U first). The final tables are the same."},
	{Name: "build-input-first", Kind: Deliberate, Area: "runtime: streaming regular joins (union_build.go)",
		Reason: "A streaming regular join (and the semi and anti joins of IN, EXISTS, NOT IN, NOT EXISTS) reads its bounded build input to its end before any row of the other, so its changelog is the same every run; Flink reads both inputs at once, and when it happens to read the padded side first it emits a NULL-padded (or not-yet-matched anti) row and retracts it with -D once the match arrives. The final tables are the same."},
	{Name: "ltz-compare-timestamp", Kind: Open, Area: "expr: TIMESTAMP_LTZ compared with a TIMESTAMP under local_time_zone",
		Reason: "Under a local_time_zone other than UTC etld refuses a comparison of a TIMESTAMP_LTZ with a TIMESTAMP or DATE: Flink's result fits neither the TIMESTAMP's instant in the zone nor the LTZ's wall clock there (in America/Los_Angeles the instant 2024-11-03 09:30Z, 01:30 PST, is neither equal to nor after the TIMESTAMP 2024-11-03 01:30, while 10:00Z equals 02:00), a rule not yet known. Every other conversion between a TIMESTAMP_LTZ and a wall clock follows the zone as Flink's does."},
	{Name: "stream-limit-no-order", Kind: Open, Area: "plan: LIMIT without ORDER BY in streaming mode",
		Reason: "SELECT ... LIMIT n [OFFSET m] without ORDER BY is refused (LIMIT is not supported yet); Flink emits the rows m+1 to m+n in arrival order as inserts (its Limit runs as a rank without a sort key)."},
	{Name: "stream-temporal-sort", Kind: Open, Area: "plan: ORDER BY the time attribute in streaming mode",
		Reason: "ORDER BY an ascending event-time attribute (then other columns) without LIMIT is refused in streaming mode; Flink sorts the rows by the watermark (its TemporalSort) and emits them as inserts once the watermark passes their time."},
	{Name: "negative-zero-literal", Kind: Open, Area: "expr: numeric literals",
		Reason: "The literal -0.0E0 is the DOUBLE -0.0 in etld; Calcite reads the signed literal as one BigDecimal, which has no negative zero, so Flink gives 0.0."},

	{Name: "double-text-java17", Kind: Open, Area: "row: DOUBLE text",
		Reason: "etld writes a DOUBLE with the shortest digits that read back as it (Double.toString's rule since Java 19, JDK-4511638); Flink on Java 17 writes a few values otherwise: Double.MIN_VALUE is 4.9E-324 there, 5.0E-324 in etld, and 1.0E23 is 9.999999999999999E22. Print output compares DOUBLE at 12 digits, so only csv and json show it."},

	{Name: "csv-text", Kind: Open, Area: "formats/csv writer (fmtopts's area)",
		Reason: "Flink's csv writer (Jackson) quotes a field holding a space, a backslash, a tab or a non-ASCII character, writes the empty string as an empty field, a TIMESTAMP without trailing zeros of its fraction (10:30:00, 10:30:45.1) and a TIMESTAMP_LTZ with a Z; etld quotes only for the delimiter, quote and line breaks, writes \"\" for the empty string, TRUE and FALSE, and pads the fraction to the precision."},
	{Name: "json-text", Kind: Open, Area: "formats/json writer (fmtopts's area)",
		Reason: "Flink's json writer escapes characters outside the Basic Multilingual Plane as surrogate pairs (\\uD83D\\uDE00) and writes TIMESTAMP fractions without trailing zeros; etld writes them as UTF-8 and pads the fraction."},

	{Name: "json-build-times", Kind: Open, Area: "expr: JSON_OBJECT, JSON_ARRAY",
		Reason: "etld's JSON_OBJECT and JSON_ARRAY take DATE and TIMESTAMP values (written as their print text); Flink refuses them at planning (Type 'DATE NOT NULL' is not scalar or cannot be converted into JSON)."},

	{Name: "streaming-temporal-sort", Kind: Open, Area: "plan: ORDER BY without a row count (order_sort.go)",
		Reason: "Flink runs a streaming ORDER BY whose first key is the time attribute ascending as a temporal sort (rows emitted in time order as the watermark passes them); etld refuses it, as it refuses every streaming ORDER BY without a row count."},
	{Name: "extra-functions", Kind: Open, Area: "expr: function names",
		Reason: "etld accepts POW as POWER; Flink 2.3 has no POW (No match found for function signature POW)."},
	{Name: "batch-changelog-source", Kind: Open, Area: "plan: batch execution",
		Reason: "etld reads a changelog-format source (maxwell-json, ogg-json, ...) in batch mode and folds its changes; Flink refuses (Querying a table in batch mode is currently only possible for INSERT-only table sources)."},

	{Name: "json-read-coercion", Kind: Open, Area: "formats/json reader (fmtopts's area)",
		Reason: "Flink's json reader takes 1.7 into an INT column as 1, writes a nested value read into a STRING column compactly ([1,2]) and keeps the first of two equal keys; etld refuses the fraction, keeps the nested text as written ([1, 2]) and keeps the last key."},

	{Name: "listagg-batch-order", Kind: Open, Area: "plan: batch aggregates (LISTAGG)",
		Reason: "In batch mode Flink sorts a window aggregate's input by key and time before LISTAGG concatenates, so the values come in time order; etld concatenates in arrival order (a CUMULATE window over out-of-order rows gives Hi,Comment#1,Comment#1,Hi where Flink gives Hi,Hi,Comment#1,Comment#1)."},
	{Name: "batch-window-distinct", Kind: Open, Area: "plan: legacy group windows in batch mode",
		Reason: "Flink's batch planner refuses a DISTINCT aggregate in a legacy GROUP BY TUMBLE/HOP window (\"DISTINCT aggregates are currently not supported\"); etld computes it."},
	{Name: "over-frame-following", Kind: Open, Area: "plan/windowop: OVER frames in batch mode",
		Reason: "An OVER frame must end at CURRENT ROW, as Flink requires in streaming mode; in batch mode Flink also runs frames ending after it (ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING, UNBOUNDED FOLLOWING), which etld refuses."},
	{Name: "csv-options", Kind: Open, Area: "formats/csv reader",
		Reason: "Flink's csv reader fails on an ISO timestamp (2024-01-02T03:04:05), which etld reads, and reads a BOOLEAN other than true as false, where etld reads yes as true."},
}

// Lookup finds a difference by name.
func Lookup(name string) (Difference, bool) {
	for _, d := range Differences {
		if d.Name == name {
			return d, true
		}
	}
	return Difference{}, false
}
