package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

// stateTTLPipeline counts clicks per user from a followed file into a
// retract CSV file, with state_ttl: a user idle for the TTL is dropped.
const stateTTLPipeline = `version: 1
name: ttl
checkpoint_interval: 200ms
state_ttl: 3s
sources:
  - name: clicks
    type: file
    path: %s
    follow: true
    monitor_interval: 50ms
    schema: [user_id STRING]
transforms:
  - name: per_user
    sql: SELECT user_id, COUNT(*) AS n FROM clicks GROUP BY user_id
sinks:
  - name: out
    from: per_user
    type: file
    path: %s
    mode: retract
`

// TestStateTTLKeyStartsAgain runs a GROUP BY with state_ttl in the
// daemon. Within one input batch a user's second click updates its count
// (-U/+U); once the admin server shows the aggregate's state emptied by
// expiry (/metrics and /pipelines, which also shows the retention), the user's next click starts it again
// with +I, not -U/+U. Expiry is observed through the state size, never
// waited for by sleeping: the test takes the TTL (3 s) plus a sweep.
func TestStateTTLKeyStartsAgain(t *testing.T) {
	work := t.TempDir()
	dir := filepath.Join(work, "pipelines")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	in, out := filepath.Join(work, "clicks.csv"), filepath.Join(work, "per_user.csv")
	writeFile(t, in, "a\nb\nb\n")
	writeFile(t, filepath.Join(dir, "ttl.yaml"), fmt.Sprintf(stateTTLPipeline, in, out))
	d := startDaemon(t, work, nil, "--daemon", "--pipelines", dir, "--admin-address", "127.0.0.1:0")
	base := d.adminURL()

	lines := func() []string {
		data, _ := os.ReadFile(out)
		return strings.Split(strings.TrimSpace(string(data)), "\n")
	}
	waitLines := func(n int) []string {
		t.Helper()
		var got []string
		testenv.Eventually(t, 30*time.Second, fmt.Sprintf("%d output lines", n), func() error {
			if got = lines(); len(got) < n {
				return fmt.Errorf("%q", got)
			}
			return nil
		})
		return got
	}
	first := waitLines(4)
	if want := []string{"+I,a,1", "+I,b,1", "-U,b,1", "+U,b,2"}; !slices.Equal(first, want) {
		t.Fatalf("first output %q, want %q", first, want)
	}

	// The state entries of the aggregate, from /metrics and /pipelines.
	series := `etld_operator_state_entries{operator="per_user/group_aggregate#1",pipeline="ttl",state_id="transform/per_user/group_aggregate#1"}`
	testenv.Eventually(t, 30*time.Second, "the expired groups freed", func() error {
		v, ok := metric(t, base, series)
		if !ok {
			_, body := httpGet(t, base+"/metrics")
			return fmt.Errorf("no series %s in\n%s", series, grepLines(body, "etld_operator_state_entries"))
		}
		if v != 0 {
			return fmt.Errorf("%v entries", v)
		}
		return nil
	})
	if st, ok := operatorState(t, base, "ttl", "transform/per_user/group_aggregate#1"); !ok || st.Entries != 0 || st.StateTTL != "3s" {
		t.Errorf("/pipelines operator_state of the aggregate: %+v (found %v), want 0 entries, state_ttl 3s", st, ok)
	}

	// a comes back: a fresh group, +I[a, 1]; nothing retracts the old one.
	f, err := os.OpenFile(in, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("a\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := waitLines(5)[4:]; !slices.Equal(got, []string{"+I,a,1"}) {
		t.Errorf("after expiry: %q, want [+I,a,1]", got)
	}
}

// operatorStateInfo is an entry of /pipelines' operator_state.
type operatorStateInfo struct {
	StateID  string `json:"state_id"`
	Entries  int64  `json:"entries"`
	StateTTL string `json:"state_ttl"`
}

// operatorState returns what /pipelines reports for the operator with
// the state id in the named pipeline.
func operatorState(t *testing.T, base, pipeline, stateID string) (operatorStateInfo, bool) {
	t.Helper()
	_, body := httpGet(t, base+"/pipelines")
	var list []struct {
		Name  string              `json:"name"`
		State []operatorStateInfo `json:"operator_state"`
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatalf("/pipelines: %v\n%s", err, body)
	}
	for _, p := range list {
		for _, s := range p.State {
			if p.Name == pipeline && s.StateID == stateID {
				return s, true
			}
		}
	}
	return operatorStateInfo{}, false
}

func grepLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
