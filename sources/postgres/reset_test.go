package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

// TestResetMovesTheSlot: a run without a checkpoint and startup: latest
// streams from the slot's confirmed position, so with the state removed
// and the slot behind, it reads the changes made since the last confirm
// into empty operators (the baseline below shows it). Reset moves the
// slot to the server's current position, as a slot made for a first run
// would be: the next run reads only what comes after. A slot that a
// running source reads is refused.
func TestResetMovesTheSlot(t *testing.T) {
	f := newFixture(t, "id bigint PRIMARY KEY, v text")
	cfg := f.config()
	cfg.Startup = "latest"
	first := open(t, cfg, nil, "id BIGINT", "v STRING")
	f.exec(t, "INSERT INTO $T VALUES (1, 'a')")
	if got := printed(readN(t, first, 1, 10)); strings.Join(got, " ") != "+I[1, a]" {
		t.Fatalf("first run read %v", got)
	}
	// The run read with no checkpoint confirmed: the slot stays where it
	// was made. Changes go on while no pipeline runs.
	if err := first.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.exec(t, "INSERT INTO $T VALUES (2, 'b')")

	// Without a reset, a run from nothing reads from the slot's position.
	baseline := open(t, cfg, nil, "id BIGINT", "v STRING")
	if got := printed(readN(t, baseline, 1, 10)); got[0] != "+I[1, a]" {
		t.Fatalf("a run from nothing without a reset read %v first; want the changes the slot held, +I[1, a]", got)
	}

	// Refused while the baseline reads the slot.
	ctx := testenv.Context(t, time.Minute)
	if _, err := build(t, cfg, nil, "id BIGINT", "v STRING").Reset(ctx); err == nil || !strings.Contains(err.Error(), "being read") {
		t.Fatalf("reset of a slot being read: %v; want a refusal", err)
	}
	if err := baseline.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	var before string
	if err := f.pool.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&before); err != nil {
		t.Fatal(err)
	}
	// The server lets the walsender go a moment after the client.
	var did string
	testenv.Eventually(t, 30*time.Second, "reset once the slot is free", func() error {
		var err error
		did, err = build(t, cfg, nil, "id BIGINT", "v STRING").Reset(ctx)
		if err != nil && strings.Contains(err.Error(), "being read") {
			return err
		}
		if err != nil {
			t.Fatal(err)
		}
		return nil
	})
	if !strings.Contains(did, "advanced replication slot "+f.slot) {
		t.Fatalf("reset said %q", did)
	}
	var behind bool
	if err := f.pool.QueryRow(ctx, "SELECT confirmed_flush_lsn < $2::pg_lsn FROM pg_replication_slots WHERE slot_name = $1", f.slot, before).Scan(&behind); err != nil {
		t.Fatal(err)
	}
	if behind {
		t.Fatal("the slot was not moved to the server's position")
	}

	after := open(t, cfg, nil, "id BIGINT", "v STRING")
	f.exec(t, "INSERT INTO $T VALUES (3, 'c')")
	if got := printed(readN(t, after, 1, 10)); got[0] != "+I[3, c]" {
		t.Fatalf("the run after the reset read %v first; want only what came after it, +I[3, c]", got)
	}

	// startup: snapshot reads no slot: nothing to reset.
	snap := cfg
	snap.Startup, snap.Slot = "snapshot", ""
	if did, err := build(t, snap, nil, "id BIGINT", "v STRING").Reset(ctx); err != nil || did != "" {
		t.Fatalf("reset of a snapshot-only source: %q, %v", did, err)
	}
	// A slot that does not exist is left to the next run.
	gone := cfg
	gone.Slot = f.slot + "_none"
	if did, err := build(t, gone, nil, "id BIGINT", "v STRING").Reset(ctx); err != nil || !strings.Contains(did, "does not exist") {
		t.Fatalf("reset of a missing slot: %q, %v", did, errors.Unwrap(err))
	}
}
