package state

import (
	"testing"
	"time"

	"github.com/etld/etld/pipeline/runtime/operator"
)

// TestTTLListReset: a reset list holds nothing (no id linked, none
// expired, Each and Sweep see none), keeps its TTL and clock, and takes
// new writes as a fresh list does. An operator restoring over live state
// resets the list first: a stale id left linked would expire the restored
// state stored under the same id.
func TestTTLListReset(t *testing.T) {
	now := time.UnixMilli(10_000)
	var l TTLList
	l.Set(operator.StateTTL{TTL: time.Second, Now: func() time.Time { return now }})
	l.Tick()
	for id := range int32(5) {
		l.Touch(id)
	}
	now = now.Add(2 * time.Second)
	l.Tick()
	if !l.Expired(3) {
		t.Fatal("id 3 is not expired a TTL after its write")
	}
	l.Reset()
	if l.N != 0 || l.Head != TTLNone || !l.On() || l.Clock != 12_000 {
		t.Fatalf("after Reset: N %d, head %d, on %v, clock %d; want empty, on, clock 12000", l.N, l.Head, l.On(), l.Clock)
	}
	for id := range int32(5) {
		if l.Linked(id) || l.Expired(id) {
			t.Fatalf("id %d linked %v, expired %v after Reset", id, l.Linked(id), l.Expired(id))
		}
	}
	l.Each(func(id int32, _ int64) { t.Errorf("Each saw id %d after Reset", id) })
	if n := l.Sweep(10, func(int32) bool { return true }); n != 0 {
		t.Errorf("Sweep freed %d ids after Reset", n)
	}
	l.Touch(3)
	l.Touch(1)
	var order []int32
	l.Each(func(id int32, _ int64) { order = append(order, id) })
	if len(order) != 2 || order[0] != 3 || order[1] != 1 || l.N != 2 {
		t.Fatalf("after Reset and two writes the list is %v (N %d), want [3 1]", order, l.N)
	}
	if l.Expired(3) {
		t.Error("a write after Reset is expired at once")
	}

	var off TTLList
	off.Set(operator.StateTTL{})
	off.Reset()
	if off.On() || off.N != 0 {
		t.Errorf("a reset list without TTL is on %v, N %d", off.On(), off.N)
	}
}

// TestTTLKeysReset: a reset key list forgets keys and their ids, and
// keeps its TTL and clock.
func TestTTLKeysReset(t *testing.T) {
	now := time.UnixMilli(5_000)
	var k TTLKeys[string]
	k.Set(operator.StateTTL{TTL: time.Second, Now: func() time.Time { return now }})
	k.Tick()
	k.Touch("a")
	k.Touch("b")
	k.Drop("a")
	k.Reset()
	if len(k.IDs) != 0 || len(k.Keys) != 0 || k.List.N != 0 || k.List.Clock != 5_000 || !k.On() {
		t.Fatalf("after Reset: %d ids, %d keys, N %d, clock %d", len(k.IDs), len(k.Keys), k.List.N, k.List.Clock)
	}
	k.Touch("c")
	if id := k.IDs["c"]; id != 0 {
		t.Errorf("the first key after Reset has id %d, want 0 (no stale free ids)", id)
	}
}
