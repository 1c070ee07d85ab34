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

// TestGroupingSetsITCase: queries of Flink's GroupingSetsITCase that
// etld refused or got wrong.
//   - Keys qualified by the two sides of a join whose columns share a
//     name (e.deptno, d.deptno) are two keys, as in a plain GROUP BY;
//     they were unqualified to the one name deptno and refused as
//     ambiguous (testCubeAndJoin).
//   - A grouping set written twice is a group of its own, numbered by
//     GROUP_ID(); its rows fell into the first one's groups, which
//     counted them twice, and GROUP_ID was unknown.
func TestGroupingSetsITCase(t *testing.T) {
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
		{"repeated grouping set", "SELECT deptno, COUNT(*) AS c, GROUP_ID() AS g FROM emp GROUP BY GROUPING SETS ((deptno), (deptno), ())",
			`          - {deptno: 10, c: 2, g: 0}
          - {deptno: 10, c: 2, g: 1}
          - {deptno: 20, c: 1, g: 0}
          - {deptno: 20, c: 1, g: 1}
          - {deptno: 30, c: 2, g: 0}
          - {deptno: 30, c: 2, g: 1}
          - {deptno: 50, c: 2, g: 0}
          - {deptno: 50, c: 2, g: 1}
          - {deptno: 60, c: 1, g: 0}
          - {deptno: 60, c: 1, g: 1}
          - {deptno: null, c: 8, g: 0}
`},
		{"GROUP_ID beside GROUPING", "SELECT gender, COUNT(*) AS c, GROUPING(gender) AS gg, GROUP_ID() AS g FROM emp GROUP BY GROUPING SETS ((gender), (), (gender), ())",
			`          - {gender: F, c: 5, gg: 0, g: 0}
          - {gender: F, c: 5, gg: 0, g: 1}
          - {gender: M, c: 3, gg: 0, g: 0}
          - {gender: M, c: 3, gg: 0, g: 1}
          - {gender: null, c: 8, gg: 1, g: 0}
          - {gender: null, c: 8, gg: 1, g: 1}
`},
		{"GROUP_ID of a plain GROUP BY", "SELECT gender, GROUP_ID() AS g FROM emp GROUP BY gender",
			`          - {gender: F, g: 0}
          - {gender: M, g: 0}
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
