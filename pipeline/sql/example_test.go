package sql_test

import (
	"errors"
	"fmt"

	"github.com/etld/etld/pipeline/sql"
)

func ExampleParse() {
	q, err := sql.Parse(`select id, count(*) as n
from table(tumble(table sensor, descriptor(event_time), interval '1' minutes))
group by window_start, window_end, id`)
	if err != nil {
		fmt.Println(err)
		return
	}
	w := q.Selects[0].From.(*sql.WindowTVF)
	fmt.Println(w.Kind, w.Table.Name, w.TimeCol.Name, w.Size.(*sql.IntervalLit).Value)
	fmt.Println(sql.Format(q))
	// Output:
	// TUMBLE sensor event_time 1m0s
	// SELECT id, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE sensor, DESCRIPTOR(event_time), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, id
}

func ExampleError_Snippet() {
	src := "SELECT id,\n       MAX(temp\nFROM sensor"
	_, err := sql.Parse(src)
	var e *sql.Error
	if errors.As(err, &e) {
		fmt.Println(e)
		fmt.Println(e.Snippet(src))
	}
	// Output:
	// 3:1: expected ) to close MAX( at 2:11, got FROM
	// FROM sensor
	// ^
}
