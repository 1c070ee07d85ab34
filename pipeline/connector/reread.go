package connector

import "context"

// Replayer is a source that says what a run restored from one of its
// checkpoints reads again. Replays returns "" when such a run reads, from
// each of the source's inputs (a file, a Kafka partition), the same
// records in the same order as the run that took the checkpoint, and
// marks each one in Batch.Origin as a row.RecordOrigin; otherwise it says
// why not ("datagen without a seed draws other rows"). Inputs may
// interleave differently from run to run. A source that is not a Replayer
// gives no such promise.
type Replayer interface {
	Replays() string
}

// Rereader is a source that can read its input again from the start and
// end where one of its positions (what Position returned at a
// checkpoint) says, for a backfill: the edited plan of a pipeline reads
// what the running one read, into fresh operators. RereadTo is called
// before Open instead of Restore; Read then returns the records before
// pos, in the order the run that took pos read them, and io.EOF. An
// error says why the source cannot (a followed file's rotation, a
// position of another mode), and the backfill is refused with it.
type Rereader interface {
	RereadTo(pos []byte) error
}

// RangeRereader is a Rereader that can also start at one of its
// positions: Read returns the records after from and before to, both
// positions of one run (from taken first), then io.EOF. A backfill that
// the pipeline's running version keeps serving beside replays up to one
// checkpoint and then catches up, over such a range, to the running
// version's final one. RereadRange is called before Open instead of
// Restore and RereadTo.
type RangeRereader interface {
	Rereader
	RereadRange(from, to []byte) error
}

// SnapshotRereader is a source that cannot read its history again but
// can take a fresh consistent snapshot of its input at a position S of
// its own and then read its log from S: a change data capture source.
// A backfill replays it as a snapshot at S (at or after the checkpoint
// the replay starts from), then reads its log from S up to the running
// version's checkpoints, which must first pass S (PositionComparer):
// its operators end with the state of the input's contents at those
// positions, not of the history that led there (results of the order
// of changes, such as event-time windows over the log's commit times,
// differ).
//
// The calls, on sources built from the pipeline file and (but for
// BeginReread and EndReread) used by one replay each:
//
//   - BeginReread, once per backfill, on a source never opened, before
//     any replay: it readies what the reads keep outside the pipeline
//     (a PostgreSQL slot of the backfill's own), first dropping what a
//     backfill that never ended left;
//   - RereadSnapshot(pos), before Open instead of Restore, pos the
//     checkpoint's position: Read returns the snapshot's rows as
//     inserts, then io.EOF; Position then returns S;
//   - RereadRange(from, to) (RangeRereader's), from a position Position
//     returned after a reread (S, or the end of a range read before) to
//     one of the running version's checkpoints, which must not be
//     before from: Read returns the log's changes between, then io.EOF;
//   - EndReread, once the backfill ended in any way (done, failed,
//     cancelled), and at the pipeline's next start after a process
//     died mid-backfill: it drops what BeginReread made. It must be safe
//     with nothing to drop.
//
// A reread source commits nothing (Committer is not called).
type SnapshotRereader interface {
	PositionComparer
	BeginReread(ctx context.Context) error
	RereadSnapshot(pos []byte) error
	RereadRange(from, to []byte) error
	EndReread(ctx context.Context) error
}

// PositionComparer orders two positions of a source (what Position
// returned), also of different runs of it (a backfill's snapshot and
// the running version's checkpoint): below 0 when a covers less of the
// input than b, 0 when the same, above 0 when more. A position that
// stands for no point of the log yet (a run still reading its own
// snapshot) is before every point of it. An error says they do not
// compare (other tables, a position of another source).
type PositionComparer interface {
	ComparePositions(a, b []byte) (int, error)
}
