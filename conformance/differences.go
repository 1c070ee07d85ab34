package conformance

// Kind says why a case's etld result differs from Flink's.
type Kind int

const (
	// Deliberate: etld differs on purpose; docs/sql.md "Differences from
	// Flink" lists it with the same name and reason.
	Deliberate Kind = iota + 1
	// Pending: work in progress in the named area (another branch of
	// issue 17 or 16): the case should match once it lands, and the test
	// then says to drop the case's expect line.
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
	{Name: "before-epoch-millis", Kind: Deliberate, Area: "expr: epoch milliseconds to timestamps",
		Reason: "A timestamp before 1970 keeps its milliseconds as the calendar says (-1 ms is 1969-12-31 23:59:59.999); Flink truncates negative milliseconds towards zero in some conversions and gives a time one second off."},
	{Name: "window-start-only", Kind: Deliberate, Area: "plan: window aggregates",
		Reason: "GROUP BY window_start without window_end over a window TVF is refused with an explanation; Flink silently plans an updating aggregate instead of a window aggregate, a common trap."},
	{Name: "regexp-re2", Kind: Deliberate, Area: "expr: regular expressions",
		Reason: "Regular expressions are Go's RE2: backreferences, lookaround, possessive quantifiers and atomic groups are refused (at validation when constant) rather than risk run times exponential in the input."},
	{Name: "convert-tz-unknown-zone", Kind: Deliberate, Area: "expr: CONVERT_TZ",
		Reason: "A time zone Java does not know is silently read as GMT by Flink; etld refuses a constant one at validation and gives NULL for a computed one, rather than a wrong time."},
	{Name: "json-query-number-text", Kind: Deliberate, Area: "expr: JSON_QUERY",
		Reason: "JSON_QUERY writes the numbers it finds as the input wrote them (1.5e3 stays 1.5e3); Flink's Jackson re-writes them as Java doubles (1500.0)."},

	{Name: "double-text-java17", Kind: Open, Area: "row: DOUBLE text",
		Reason: "etld writes a DOUBLE with the shortest digits that read back as it (Double.toString's rule since Java 19, JDK-4511638); Flink on Java 17 writes a few values otherwise: Double.MIN_VALUE is 4.9E-324 there, 5.0E-324 in etld, and 1.0E23 is 9.999999999999999E22. Print output compares DOUBLE at 12 digits, so only csv and json show it."},

	{Name: "decimal38", Kind: Pending, Area: "issue 17 item 1 (branch dec38): DECIMAL precision 38 and Flink's result types",
		Reason: "DECIMAL is capped at 18 digits and its arithmetic result types are narrower than Flink's LogicalTypeMerging rules."},
	{Name: "csv-options", Kind: Pending, Area: "issue 17 item 5 (branch fmtopts): csv empty fields and options",
		Reason: "An unquoted empty csv field is NULL in etld; Flink reads the empty string in a STRING column and fails on an empty numeric field."},
	{Name: "json-options", Kind: Pending, Area: "issue 17 item 6 (branch fmtopts): json format options",
		Reason: "Flink's json options (fail-on-missing-field, ignore-parse-errors, map-null-key.*) and defaults are not all followed yet."},
	{Name: "composite-types", Kind: Pending, Area: "issue 17 item 7 (branch composite): ARRAY, MAP, ROW",
		Reason: "Composite types and their functions are refused."},
	{Name: "top-n", Kind: Pending, Area: "issue 16 items 1-3 (branch topn): ROW_NUMBER Top-N and deduplication",
		Reason: "OVER (PARTITION BY ... ORDER BY ...) with a rank filter is refused."},
	{Name: "over-aggregates", Kind: Pending, Area: "issue 16 items 4-5 (branch over): OVER aggregates",
		Reason: "OVER windows (ROWS/RANGE BETWEEN ... PRECEDING) are refused."},
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
