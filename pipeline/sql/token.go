package sql

import (
	"strconv"
	"strings"
)

// tokKind classifies a token.
type tokKind uint8

const (
	tokEOF     tokKind = iota
	tokError           // a lexing error: text is the message
	tokWord            // an unquoted word: a keyword or an identifier
	tokQuoted          // a backquoted identifier: text is the name
	tokInt             // 42
	tokDecimal         // 1.5, .5, 1.
	tokApprox          // 1.5e3
	tokString          // 'it''s': text is the content, quotes undone
	tokBytes           // X'0a': text is the hex digits
	tokPunct           // operators and punctuation: text is the symbol
)

// token is one lexeme. up is the upper-cased text of a word, for keyword
// comparisons; text keeps the word as written.
type token struct {
	kind tokKind
	pos  Pos
	end  int // byte offset just after the token
	text string
	up   string
}

// is reports whether t is the keyword kw (given upper-case). Quoted
// identifiers are never keywords.
func (t token) is(kw string) bool { return t.kind == tokWord && t.up == kw }

// isPunct reports whether t is the operator or punctuation s.
func (t token) isPunct(s string) bool { return t.kind == tokPunct && t.text == s }

// describe names t for an error message: keywords upper-case, names and
// literals with their kind, symbols quoted.
func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "end of query"
	case tokError:
		return "invalid input"
	case tokWord:
		if reserved[t.up] {
			return t.up
		}
		return "name " + t.text
	case tokQuoted:
		return "name `" + strings.ReplaceAll(t.text, "`", "``") + "`"
	case tokInt, tokDecimal, tokApprox:
		return "number " + t.text
	case tokString:
		s := t.text
		if len(s) > 20 {
			s = s[:17] + "..."
		}
		return "string '" + strings.ReplaceAll(s, "'", "''") + "'"
	case tokBytes:
		return "binary string X'" + t.text + "'"
	case tokPunct:
		return strconv.Quote(t.text)
	}
	return "token"
}

// reserved words cannot be unquoted identifiers in etld's grammar: they
// start or end clauses, or are operators and literals. Flink reserves many
// more (see flinkReserved); etld accepts those as names where unambiguous
// and Format quotes them so the SQL it writes stays valid Flink SQL.
var reserved = wordSet(`
	ALL AND AS BETWEEN BY CASE CROSS DISTINCT ELSE END ESCAPE EXCEPT EXISTS
	FALSE FETCH FROM FULL GROUP HAVING IN INNER INTERSECT INTERVAL IS JOIN
	LATERAL LEFT LIKE LIMIT MINUS NATURAL NOT NULL ON OR ORDER OUTER OVER
	RIGHT SELECT SIMILAR TABLE THEN TRUE UNION UNKNOWN USING VALUES WHEN
	WHERE WINDOW WITH`)

// clauseWords may be column names but never an alias written without AS:
// after a FROM item or a select item they start a clause etld refuses with
// a clear message.
var clauseWords = wordSet(`OFFSET QUALIFY MATCH_RECOGNIZE TABLESAMPLE FOR`)

// niladic functions are written without parentheses.
var niladic = wordSet(`CURRENT_TIMESTAMP CURRENT_DATE CURRENT_TIME LOCALTIME
	LOCALTIMESTAMP`)

// flinkReserved is the SQL:2011 reserved-word list that Flink's parser
// (Calcite) enforces, plus Flink's own additions. Format backquotes these.
var flinkReserved = wordSet(`
	ABS ALL ALLOCATE ALLOW ALTER AND ANY ARE ARRAY ARRAY_MAX_CARDINALITY AS
	ASENSITIVE ASYMMETRIC AT ATOMIC AUTHORIZATION AVG BEGIN BEGIN_FRAME
	BEGIN_PARTITION BETWEEN BIGINT BINARY BIT BLOB BOOLEAN BOTH BY BYTES CALL
	CALLED CARDINALITY CASCADED CASE CAST CEIL CEILING CHAR CHARACTER
	CHARACTER_LENGTH CHAR_LENGTH CHECK CLASSIFIER CLOB CLOSE COALESCE COLLATE
	COLLECT COLUMN COMMIT CONDITION CONNECT CONSTRAINT CONTAINS CONVERT CORR
	CORRESPONDING COUNT COVAR_POP COVAR_SAMP CREATE CROSS CUBE CUME_DIST
	CURRENT CURRENT_CATALOG CURRENT_DATE CURRENT_DEFAULT_TRANSFORM_GROUP
	CURRENT_PATH CURRENT_ROLE CURRENT_ROW CURRENT_SCHEMA CURRENT_TIME
	CURRENT_TIMESTAMP CURRENT_TRANSFORM_GROUP_FOR_TYPE CURRENT_USER CURSOR
	CYCLE DATE DATETIME DAY DEALLOCATE DEC DECIMAL DECLARE DEFAULT DEFINE DELETE
	DENSE_RANK DEREF DESCRIBE DETERMINISTIC DISALLOW DISCONNECT DISTINCT
	DOUBLE DROP DYNAMIC EACH ELEMENT ELSE EMPTY END END_FRAME END_PARTITION
	EQUALS ESCAPE EVERY EXCEPT EXEC EXECUTE EXISTS EXP EXPLAIN EXTEND EXTERNAL
	EXTRACT FALSE FETCH FILTER FIRST_VALUE FLOAT FLOOR FOR FOREIGN FRAME_ROW
	FREE FROM FULL FUNCTION FUSION GET GLOBAL GRANT GROUP GROUPING GROUPS
	HAVING HOLD HOUR IDENTITY IMPORT IN INDICATOR INITIAL INNER INOUT
	INSENSITIVE INSERT INT INTEGER INTERSECT INTERSECTION INTERVAL INTO IS
	JOIN JSON_ARRAY JSON_ARRAYAGG JSON_EXISTS JSON_OBJECT JSON_OBJECTAGG
	JSON_QUERY JSON_VALUE LAG LANGUAGE LARGE LAST_VALUE LATERAL LEAD LEADING
	LEFT LIKE LIKE_REGEX LIMIT LN LOCAL LOCALTIME LOCALTIMESTAMP LOWER MATCH
	MATCHES MATCH_NUMBER MATCH_RECOGNIZE MAX MEASURES MEMBER MERGE METHOD MIN
	MINUS MINUTE MOD MODIFIES MODULE MONTH MULTISET NATIONAL NATURAL NCHAR
	NCLOB NEW NEXT NO NONE NORMALIZE NOT NTH_VALUE NTILE NULL NULLIF NUMERIC
	OCCURRENCES_REGEX OCTET_LENGTH OF OFFSET OLD OMIT ON ONE ONLY OPEN OR
	ORDER OUT OUTER OVER OVERLAPS OVERLAY PARAMETER PARTITION PATTERN PER
	PERCENT PERCENTILE_CONT PERCENTILE_DISC PERCENT_RANK PERIOD PERMUTE
	PORTION POSITION POSITION_REGEX POWER PRECEDES PRECISION PREPARE PREV
	PRIMARY PROCEDURE RANGE RANK RAW READS REAL RECURSIVE REF REFERENCES
	REFERENCING REGR_AVGX REGR_AVGY REGR_COUNT REGR_INTERCEPT REGR_R2
	REGR_SLOPE REGR_SXX REGR_SXY REGR_SYY RELEASE RESET RESULT RETURN RETURNS
	REVOKE RIGHT ROLLBACK ROLLUP ROW ROWS ROW_NUMBER RUNNING SAVEPOINT SCOPE
	SCROLL SEARCH SECOND SEEK SELECT SENSITIVE SESSION_USER SET SHOW SIMILAR
	SKIP SMALLINT SOME SPECIFIC SPECIFICTYPE SQL SQLEXCEPTION SQLSTATE
	SQLWARNING SQRT START STATIC STDDEV_POP STDDEV_SAMP STREAM STRING
	SUBMULTISET SUBSET SUBSTRING SUBSTRING_REGEX SUCCEEDS SUM SYMMETRIC SYSTEM
	SYSTEM_TIME SYSTEM_USER TABLE TABLESAMPLE THEN TIME TIMESTAMP
	TIMEZONE_HOUR TIMEZONE_MINUTE TINYINT TO TRAILING TRANSLATE
	TRANSLATE_REGEX TRANSLATION TREAT TRIGGER TRIM TRIM_ARRAY TRUE TRUNCATE
	UESCAPE UNION UNIQUE UNKNOWN UNNEST UPDATE UPPER UPSERT USER USING VALUE
	VALUES VALUE_OF VARBINARY VARCHAR VARYING VAR_POP VAR_SAMP VERSIONING
	WHEN WHENEVER WHERE WIDTH_BUCKET WINDOW WITH WITHIN WITHOUT YEAR`)

func wordSet(s string) map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}
