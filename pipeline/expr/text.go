package expr

import (
	"sync"

	"github.com/etld/etld/pipeline/sql"
)

// exprString renders an expression back to SQL for messages: run-time
// errors name the subexpression that failed. The text is made when an
// error first needs it: rendering every subexpression while compiling
// would make compiling a ten-thousand-term sum quadratic.
func exprString(e sql.Expr) func() string {
	return sync.OnceValue(func() string { return sql.Format(e) })
}
