package windowop

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/etld/etld/pipeline/runtime/operator"
)

// stateLog is a session set's owner that records what the set asks of
// it: "new a#0" hands out id 0 for a new session of key a, "#1 <- #2"
// merges session 2's state into session 1's.
type stateLog struct {
	next int32
	log  *[]string
}

func (l *stateLog) newState(key []byte) int32 {
	id := l.next
	l.next++
	*l.log = append(*l.log, fmt.Sprintf("new %s#%d", key, id))
	return id
}

func (l *stateLog) mergeState(into, from int32) {
	*l.log = append(*l.log, fmt.Sprintf("#%d <- #%d", into, from))
}

func showSession(set *sessionSet, s *session) string {
	return fmt.Sprintf("%s#%d [%s,%s)", set.key(s), s.id, secs(s.start), secs(s.end))
}

// The steps' times are seconds, the set's microseconds: a session fires
// at its last millisecond (lastMilli).
func secs(micros int64) string { return strconv.FormatFloat(float64(micros)/1e6, 'f', -1, 64) }

func secsMicros(text string) int64 {
	f, _ := strconv.ParseFloat(text, 64)
	return int64(math.Round(f * 1e6))
}

// runSessionSet plays steps on a set of gap 5: "a@4" adds key a's window
// at time 4 under the watermark of the last fire, "fire 10" fires to
// watermark 10 ("fire max": operator.MaxWatermark). It logs the session
// each add returns and each session fired, after the step that fired it. After step
// restoreAfter (-1: never) the set goes on as a fresh one restored from
// copies of its sessions, as from a snapshot.
func runSessionSet(t *testing.T, steps []string, restoreAfter int) []string {
	t.Helper()
	var log []string
	owner := &stateLog{log: &log}
	set := newSessionSet(5_000_000)
	wm := operator.NoWatermark
	for i, step := range steps {
		if at, ok := strings.CutPrefix(step, "fire "); ok {
			wm = operator.MaxWatermark
			if at != "max" {
				wm = secsMicros(at)
			}
			if err := set.fire(wm, func(s *session) error {
				log = append(log, step+": "+showSession(&set, s))
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		} else {
			key, at, _ := strings.Cut(step, "@")
			if s := set.add([]byte(key), secsMicros(at), wm, owner); s == nil {
				log = append(log, step+" late")
			} else {
				log = append(log, step+" in "+showSession(&set, s))
			}
		}
		if i == restoreAfter {
			var copies []*session
			var keys []string
			for _, s := range set.sessions() {
				c := *s
				c.kid = -1 // restore sets it from keys
				copies = append(copies, &c)
				keys = append(keys, string(set.key(s)))
			}
			restored := newSessionSet(5_000_000)
			restored.restore(set.seq, copies, keys)
			set = restored
		}
	}
	n := 0
	for i := range set.byKey {
		k := &set.byKey[i]
		n += len(k.sessions())
		// A key's only session knows it (sole), and no other does.
		if k.one[0] != nil && (!k.one[0].sole || len(k.list) > 0) {
			t.Errorf("key %d: its one session is not sole, or it has a list too", i)
		}
		for _, s := range k.list {
			if s.sole {
				t.Errorf("key %d: a session of its list is sole", i)
			}
		}
	}
	keys := map[string]bool{}
	for _, s := range set.sessions() {
		keys[string(set.key(s))] = true
	}
	if len(keys) != set.keyCount() {
		t.Errorf("%d keys with sessions, the key table holds %d", len(keys), set.keyCount())
	}
	if n != set.live {
		t.Errorf("%d sessions open, live says %d", n, set.live)
	}
	return log
}

func TestSessionSet(t *testing.T) {
	for _, tt := range []struct {
		name  string
		steps []string
		want  []string
	}{{
		name:  "keys and gaps keep sessions apart, fired in end order",
		steps: []string{"a@10", "b@1", "a@0", "fire max"},
		want: []string{
			"new a#0", "a@10 in a#0 [10,15)", "new b#1", "b@1 in b#1 [1,6)", "new a#2", "a@0 in a#2 [0,5)",
			"fire max: a#2 [0,5)", "fire max: b#1 [1,6)", "fire max: a#0 [10,15)",
		},
	}, {
		name:  "windows that touch are one session",
		steps: []string{"a@0", "a@5", "fire max"},
		want:  []string{"new a#0", "a@0 in a#0 [0,5)", "a@5 in a#0 [0,10)", "fire max: a#0 [0,10)"},
	}, {
		name:  "a row in the gap joins two sessions into the earlier one",
		steps: []string{"a@10", "a@0", "a@5", "fire max"},
		want: []string{
			"new a#0", "a@10 in a#0 [10,15)", "new a#1", "a@0 in a#1 [0,5)",
			"#1 <- #0", "a@5 in a#1 [0,15)", "fire max: a#1 [0,15)",
		},
	}, {
		name:  "rows filling the gaps merge the sessions one after another into the first",
		steps: []string{"a@0", "a@8", "a@16", "a@4", "a@12", "fire max"},
		want: []string{
			"new a#0", "a@0 in a#0 [0,5)", "new a#1", "a@8 in a#1 [8,13)", "new a#2", "a@16 in a#2 [16,21)",
			"#0 <- #1", "a@4 in a#0 [0,13)", "#0 <- #2", "a@12 in a#0 [0,21)", "fire max: a#0 [0,21)",
		},
	}, {
		name:  "an extended session fires at its new end",
		steps: []string{"a@0", "a@3", "fire 5", "fire 7", "fire 8"},
		want:  []string{"new a#0", "a@0 in a#0 [0,5)", "a@3 in a#0 [0,8)", "fire 8: a#0 [0,8)"},
	}, {
		name:  "a new window ended by the watermark is late; one joining an open session is not",
		steps: []string{"a@8", "fire 10", "a@2", "a@3", "b@4", "b@6", "fire max"},
		want: []string{
			"new a#0", "a@8 in a#0 [8,13)", "a@2 late", "a@3 in a#0 [3,13)", "b@4 late", "new b#1", "b@6 in b#1 [6,11)",
			"fire max: b#1 [6,11)", "fire max: a#0 [3,13)",
		},
	}, {
		name:  "sessions ending together fire in creation order",
		steps: []string{"b@0", "a@2", "b@2", "d@9", "c@9", "fire max"},
		want: []string{
			"new b#0", "b@0 in b#0 [0,5)", "new a#1", "a@2 in a#1 [2,7)", "b@2 in b#0 [0,7)",
			"new d#2", "d@9 in d#2 [9,14)", "new c#3", "c@9 in c#3 [9,14)",
			"fire max: b#0 [0,7)", "fire max: a#1 [2,7)", "fire max: d#2 [9,14)", "fire max: c#3 [9,14)",
		},
	}, {
		name:  "a session fires at its last millisecond; a row after it opens a session of its own",
		steps: []string{"a@0", "fire 4.998", "fire 4.999", "a@4.5", "fire max"},
		want:  []string{"new a#0", "a@0 in a#0 [0,5)", "fire 4.999: a#0 [0,5)", "new a#1", "a@4.5 in a#1 [4.5,9.5)", "fire max: a#1 [4.5,9.5)"},
	}, {
		name:  "a fired session's key starts afresh",
		steps: []string{"a@0", "fire 5", "a@5", "fire max"},
		want:  []string{"new a#0", "a@0 in a#0 [0,5)", "fire 5: a#0 [0,5)", "new a#1", "a@5 in a#1 [5,10)", "fire max: a#1 [5,10)"},
	}, {
		name:  "a key's sessions go from its one to a list and back, in start order",
		steps: []string{"a@0", "a@20", "fire 5", "a@10", "a@14", "a@17", "fire max"},
		want: []string{
			"new a#0", "a@0 in a#0 [0,5)", "new a#1", "a@20 in a#1 [20,25)", "fire 5: a#0 [0,5)",
			"new a#2", "a@10 in a#2 [10,15)", "a@14 in a#2 [10,19)", "#2 <- #1", "a@17 in a#2 [10,25)", "fire max: a#2 [10,25)",
		},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			for restoreAfter := -1; restoreAfter < len(tt.steps); restoreAfter++ {
				if got := runSessionSet(t, tt.steps, restoreAfter); !slices.Equal(got, tt.want) {
					t.Fatalf("restored after step %d: got\n%s\nwant\n%s", restoreAfter, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
				}
			}
		})
	}
}
