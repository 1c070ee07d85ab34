package pipeline_test

import (
	"fmt"
	"path/filepath"
	"testing"
)

// groupingSetsJoinPipeline joins GroupingSetsITCase's emp and dept
// (their deptno columns share a name) for the grouping sets below;
// emp without Wilma, whose NULL deptno joins nothing.
const groupingSetsJoinPipeline = `version: 1
name: gsjoin
execution: %s
sources:
  - name: emp
    type: file
    path: %s
    schema: [ename STRING, deptno INT, gender STRING]
  - name: dept
    type: file
    path: %s
    schema: [deptno INT, dname STRING]
transforms:
  - name: q
    sql: |
      %s
sinks:
  - {name: out, from: q, type: print}
tests:
  - name: grouping sets over a join
    inputs:
      emp:
        lines: |
          Adam,50,M
          Alice,30,F
          Bob,10,M
          Eric,20,M
          Eve,50,F
          Grace,60,F
          Jane,10,F
          Susan,30,F
      dept:
        lines: |
          10,Sales
          20,Marketing
          30,Engineering
          40,Empty
    expect:
      out:
        final:
%s`

// TestGroupingSetsOverJoinQualifiedKeys: grouping set keys qualified by
// the two sides of a join whose columns share a name (e.deptno,
// d.deptno) are two keys, as in a plain GROUP BY; they were unqualified
// to the one name deptno and refused as ambiguous (GroupingSetsITCase's
// testCubeAndJoin).
func TestGroupingSetsOverJoinQualifiedKeys(t *testing.T) {
	cases := []struct {
		name, query, final string
	}{
		{"cube of both deptnos", "SELECT e.deptno, e.gender, MIN(e.ename) AS min_name FROM emp AS e JOIN dept AS d ON e.deptno = d.deptno GROUP BY CUBE(e.deptno, d.deptno, e.gender) HAVING COUNT(*) > 2 OR gender = 'M' AND e.deptno = 10",
			`          - {deptno: 10, gender: M, min_name: Bob}
          - {deptno: 10, gender: M, min_name: Bob}
          - {deptno: null, gender: F, min_name: Alice}
          - {deptno: null, gender: null, min_name: Alice}
`},
		{"grouping of each side's key", "SELECT e.deptno AS ed, d.deptno AS dd, GROUPING(e.deptno) AS ge, GROUPING_ID(e.deptno, d.deptno) AS gid, COUNT(*) AS c FROM emp AS e JOIN dept AS d ON e.deptno = d.deptno GROUP BY GROUPING SETS ((e.deptno), (d.deptno), ())",
			`          - {ed: 10, dd: null, ge: 0, gid: 1, c: 2}
          - {ed: 20, dd: null, ge: 0, gid: 1, c: 1}
          - {ed: 30, dd: null, ge: 0, gid: 1, c: 2}
          - {ed: null, dd: 10, ge: 1, gid: 2, c: 2}
          - {ed: null, dd: 20, ge: 1, gid: 2, c: 1}
          - {ed: null, dd: 30, ge: 1, gid: 2, c: 2}
          - {ed: null, dd: null, ge: 1, gid: 3, c: 5}
`},
	}
	for _, c := range cases {
		for _, mode := range []string{"batch", "streaming"} {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				dir := t.TempDir()
				runPipeTests(t, dir, fmt.Sprintf(groupingSetsJoinPipeline, mode,
					filepath.Join(dir, "emp.csv"), filepath.Join(dir, "dept.csv"), c.query, c.final))
			})
		}
	}
}
