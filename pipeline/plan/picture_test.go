package plan_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
	"github.com/etld/etld/pipeline/plan"
)

// exampleDescriptions describes the examples in file order, each alone
// and all together (as `etld explain configs/examples` does).
func exampleDescriptions(t *testing.T) (names []string, each map[string]plan.Description, all []plan.Description) {
	plans := examplePlans(t)
	each = map[string]plan.Description{}
	for name, p := range plans {
		names = append(names, name)
		each[name] = p.Describe()
	}
	sort.Strings(names)
	for _, name := range names {
		all = append(all, each[name])
	}
	return names, each, all
}

func TestPicturesOfExamples(t *testing.T) {
	names, each, all := exampleDescriptions(t)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			ds := []plan.Description{each[name]}
			golden(t, "pictures/"+name+".dot", plan.Dot(ds))
			golden(t, "pictures/"+name+".mmd", plan.Mermaid(ds))
		})
	}
	golden(t, "pictures/all-examples.dot", plan.Dot(all))
	golden(t, "pictures/all-examples.mmd", plan.Mermaid(all))
}

// awkward is a pipeline whose names and SQL hold every character the
// picture formats treat specially.
const awkward = `version: 1
name: awkward.names
sources:
  - name: in_put
    type: datagen
    rows: 3
    seed: 1
    schema:
      - id INT
      - txt STRING
transforms:
  - name: t1
    sql: |
      SELECT txt AS ` + "`" + `a "b" <c>|#1` + "`" + `, COUNT(*) AS n FROM in_put
      WHERE txt <> 'say "hi" \\ <b>|#&%% end' GROUP BY txt
sinks:
  - name: 'out "x" \\ ` + "`" + `md` + "`" + ` <i>|#&amp; end'
    from: t1
    type: print
`

// chained has transforms that read transforms, a global aggregate (its
// upsert key is the empty one), DISTINCT and a sink that reads a source.
const chained = `version: 1
name: chained
sources:
  - name: gen
    type: datagen
    rows: 3
    schema: [id INT, s STRING]
transforms:
  - name: a
    sql: SELECT * FROM gen
  - name: b
    sql: SELECT * FROM a
  - name: c
    sql: SELECT COUNT(*) AS n FROM b
  - name: d
    sql: SELECT DISTINCT s FROM gen
sinks:
  - name: o1
    from: b
    type: print
  - name: o2
    from: c
    type: print
  - name: o3
    from: gen
    type: blackhole
  - name: o4
    from: d
    type: print
`

func awkwardDescription(t *testing.T) plan.Description {
	t.Helper()
	return describeYAML(t, "awkward.yaml", awkward)
}

func describeYAML(t *testing.T, file, yaml string) plan.Description {
	t.Helper()
	return buildPlan(t, allConnectors(), file, []byte(yaml), func(string) (string, bool) { return "", false }).Describe()
}

func TestPicturesEscapeNames(t *testing.T) {
	d := awkwardDescription(t)
	golden(t, "pictures/awkward.dot", plan.Dot([]plan.Description{d}))
	golden(t, "pictures/awkward.mmd", plan.Mermaid([]plan.Description{d}))
	checkMermaid(t, plan.Mermaid([]plan.Description{d}), []plan.Description{d})
}

func TestDescribeChainedTransforms(t *testing.T) {
	d := describeYAML(t, "chained.yaml", chained)
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "describe/chained.json", string(data)+"\n")
	golden(t, "pictures/chained.dot", plan.Dot([]plan.Description{d}))
	golden(t, "pictures/chained.mmd", plan.Mermaid([]plan.Description{d}))
	checkGraph(t, d)
	checkMermaid(t, plan.Mermaid([]plan.Description{d}), []plan.Description{d})
	edges := map[string]plan.EdgeInfo{}
	for _, e := range d.Edges {
		edges[e.From+" -> "+e.To] = e
	}
	for _, c := range []struct {
		edge string
		text string
		key  []string
	}{
		{"transform:a/calc#1 -> transform:b/calc#1", "[I]", nil},
		{"transform:c/group_aggregate#1 -> transform:c/calc#2", "[I,UB,UA,D]", []string{}},
		{"source:gen -> sink:o3", "[I]", nil},
		{"transform:d/distinct#1 -> sink:o4", "[I]", []string{"s"}},
	} {
		e, ok := edges[c.edge]
		if !ok {
			t.Errorf("no edge %s among %v", c.edge, d.Edges)
			continue
		}
		if e.Changelog.Text != c.text || (e.UpsertKey == nil) != (c.key == nil) || !slices.Equal(e.UpsertKey, c.key) {
			t.Errorf("edge %s: %s key %#v, want %s key %#v", c.edge, e.Changelog.Text, e.UpsertKey, c.text, c.key)
		}
	}
}

// TestDotRendersWithGraphviz runs Graphviz on the dot of every example,
// of all of them together and of the awkward names, and checks that the
// SVG shows every node's name and every edge's mode: a quote escaped
// wrongly would end a label early or fail the parse.
func TestDotRendersWithGraphviz(t *testing.T) {
	dot := testenv.Dot(t)
	names, each, all := exampleDescriptions(t)
	cases := map[string][]plan.Description{"all-examples": all, "awkward": {awkwardDescription(t)},
		"chained": {describeYAML(t, "chained.yaml", chained)}}
	for _, name := range names {
		cases[name] = []plan.Description{each[name]}
	}
	for name, ds := range cases {
		t.Run(name, func(t *testing.T) {
			texts := renderSVG(t, dot, plan.Dot(ds))
			for _, d := range ds {
				for _, n := range d.Nodes {
					want := n.Label
					if n.Kind == plan.KindTransform {
						want = "transform " + n.Label
					}
					if !slices.Contains(texts, want) {
						t.Errorf("%s: node %q: the SVG has no text %q; it has %q", d.Name, n.ID, want, texts)
					}
				}
				for _, e := range d.Edges {
					if !slices.Contains(texts, e.Changelog.Text) {
						t.Errorf("%s: edge %s -> %s: no text %q in the SVG", d.Name, e.From, e.To, e.Changelog.Text)
					}
					if e.UpsertKey != nil && !slices.Contains(texts, "upsertKey="+plan.KeyText(e.UpsertKey)) {
						t.Errorf("%s: edge %s -> %s: no upsert key %v in the SVG", d.Name, e.From, e.To, e.UpsertKey)
					}
				}
			}
		})
	}
}

// renderSVG runs dot -Tsvg and returns the SVG's text elements.
func renderSVG(t *testing.T, dot, src string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, dot, "-Tsvg")
	cmd.Stdin = strings.NewReader(src)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("dot: %v: %s\ninput:\n%s", err, errOut.String(), src)
	}
	if errOut.Len() > 0 {
		t.Errorf("dot warned: %s", errOut.String())
	}
	if out.Len() == 0 {
		t.Fatal("dot wrote no SVG")
	}
	var texts []string
	dec := xml.NewDecoder(&out)
	dec.Strict = false // the DOCTYPE names a DTD that is not fetched
	inText := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG does not parse: %v", err)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			inText = x.Name.Local == "text"
		case xml.EndElement:
			inText = false
		case xml.CharData:
			if inText {
				texts = append(texts, string(x))
			}
		}
	}
	if len(texts) == 0 {
		t.Fatal("the SVG has no text")
	}
	return texts
}

func TestMermaidStructure(t *testing.T) {
	names, each, all := exampleDescriptions(t)
	for _, name := range names {
		ds := []plan.Description{each[name]}
		checkMermaid(t, plan.Mermaid(ds), ds)
	}
	checkMermaid(t, plan.Mermaid(all), all)
}

var (
	mermaidID       = `[A-Za-z][A-Za-z0-9_]*`
	mermaidLabel    = `"[^"]*"`
	mermaidSubgraph = regexp.MustCompile(`^subgraph (` + mermaidID + `)\[(` + mermaidLabel + `)\]$`)
	mermaidNode     = regexp.MustCompile(`^(` + mermaidID + `)(\[/|\[\(|\[\[|\()(` + mermaidLabel + `)(\\\]|\)\]|\]\]|\))$`)
	mermaidEdge     = regexp.MustCompile(`^(` + mermaidID + `) -->\|(` + mermaidLabel + `)\| (` + mermaidID + `)$`)
	mermaidShapes   = map[string]string{"[/": `\]`, "[(": ")]", "[[": "]]", "(": ")"}
	// An entity code (#34;) or a line break is all a label may escape.
	mermaidEntity = regexp.MustCompile(`#[0-9]+;|<br>`)
)

// checkMermaid checks what Mermaid's flowchart grammar needs, as far as
// can be done without running Mermaid: the header, one statement per
// line (a subgraph, its end, a node, an edge), balanced subgraphs, shapes
// that close as they open, labels with no raw quote, no HTML or Markdown
// opener and no lone #, ids defined once and not the keyword end, edges
// between defined nodes; and that the labels, decoded, say what Dot
// says: every node's label and every edge's mode.
func checkMermaid(t *testing.T, src string, ds []plan.Description) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(src, "\n"), "\n")
	if lines[0] != "flowchart LR" {
		t.Fatalf("first line %q, want flowchart LR", lines[0])
	}
	defined := map[string]bool{}
	var labels []string
	var edges [][2]string
	depth := 0
	label := func(n int, q string) {
		inner := q[1 : len(q)-1]
		if strings.ContainsAny(mermaidEntity.ReplaceAllString(inner, ""), "\"<>#&|`%") {
			t.Errorf("line %d: label %s holds a character Mermaid reads", n, q)
		}
		labels = append(labels, decodeMermaid(inner)...)
	}
	define := func(n int, id string) {
		if defined[id] || strings.EqualFold(id, "end") {
			t.Errorf("line %d: id %q defined twice or a keyword", n, id)
		}
		defined[id] = true
	}
	for i, line := range lines[1:] {
		n := i + 2
		s := strings.TrimSpace(line)
		if s == "end" {
			depth--
			if depth < 0 {
				t.Errorf("line %d: end without subgraph", n)
			}
			continue
		}
		if m := mermaidSubgraph.FindStringSubmatch(s); m != nil {
			depth++
			define(n, m[1])
			label(n, m[2])
			continue
		}
		if m := mermaidNode.FindStringSubmatch(s); m != nil {
			if mermaidShapes[m[2]] != m[4] {
				t.Errorf("line %d: shape opens %s and closes %s", n, m[2], m[4])
			}
			define(n, m[1])
			label(n, m[3])
			continue
		}
		if m := mermaidEdge.FindStringSubmatch(s); m != nil {
			label(n, m[2])
			edges = append(edges, [2]string{m[1], m[3]})
			continue
		}
		t.Errorf("line %d is no flowchart statement: %q", n, line)
	}
	if depth != 0 {
		t.Errorf("%d subgraphs are not ended", depth)
	}
	for _, e := range edges {
		if !defined[e[0]] || !defined[e[1]] {
			t.Errorf("edge %s --> %s joins an undefined node", e[0], e[1])
		}
	}
	want := 0
	for _, d := range ds {
		want += len(d.Edges)
		for _, n := range d.Nodes {
			w := n.Label
			if n.Kind == plan.KindTransform {
				w = "transform " + n.Label
			}
			if !slices.Contains(labels, w) {
				t.Errorf("%s: node %q: no label line %q", d.Name, n.ID, w)
			}
		}
		for _, e := range d.Edges {
			if !slices.Contains(labels, e.Changelog.Text) {
				t.Errorf("%s: edge %s -> %s: no label %q", d.Name, e.From, e.To, e.Changelog.Text)
			}
		}
	}
	if len(edges) != want {
		t.Errorf("%d edges drawn, the descriptions have %d", len(edges), want)
	}
}

// decodeMermaid turns a label back into its lines of text.
func decodeMermaid(s string) []string {
	s = regexp.MustCompile(`#([0-9]+);`).ReplaceAllStringFunc(s, func(e string) string {
		var r rune
		for _, c := range e[1 : len(e)-1] {
			r = r*10 + c - '0'
		}
		return string(r)
	})
	return strings.Split(s, "<br>")
}
