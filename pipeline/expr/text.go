package expr

import "github.com/etld/etld/pipeline/sql"

// exprString renders an expression back to SQL for messages: run-time
// errors name the subexpression that failed.
func exprString(e sql.Expr) string { return sql.Format(e) }
