// Package checkpoint stores a pipeline's checkpoints on disk, atomically:
// a checkpoint is visible only once it is complete and durable.
//
// Layout, under state_dir/<pipeline>/:
//
//	chk-00000000000000000042   one file per checkpoint (the last Keep kept)
//	MANIFEST                   names the newest complete checkpoint
//	INSTANCE                   the state's identity (Instance), made once
//	FENCE                      the last number Fence handed out
//	part-...                   states written in pieces (part.go)
//
// All are written the same way: into a temporary file in the directory,
// fsync, rename over the final name, fsync the directory. A crash at any
// moment leaves either the old manifest or the new one, each naming a
// checkpoint file that is complete; temporary files left behind are
// never read and are removed by the next write.
//
// A checkpoint file is "ETLDCKPT", a version byte (5; files of version
// 1, before RuntimePart, 2, before Entries, 3, whose operator IDs were
// "transform/<name>/<depth>", and 4, before StateTTL, are still read), the fields below
// (varints, length-prefixed strings and byte strings) and a CRC-32C of
// everything before it, so a damaged file is refused rather than
// misread.
package checkpoint

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/etld/etld/internal/durable"
	"github.com/etld/etld/pipeline/row"
)

// Component is one node's part of a checkpoint.
type Component struct {
	// ID names the component stably across runs: "source/<name>",
	// "sink/<name>", "transform/<uid or name>/<kind>#<n>" (format 3 and
	// before: "transform/<name>/<depth>", see Checkpoint.Format).
	ID string
	// Fingerprint describes what the state was made for (schema, SQL,
	// mode); a restore compares it with the current pipeline's.
	Fingerprint string
	// Ended: the node had finished its input (a source at its end, an
	// operator past Finish, a sink closed) when the checkpoint was taken.
	Ended bool
	// Runtime is the runtime's state of the node: an operator's snapshot,
	// a source's watermark.
	Runtime []byte
	// RuntimePart, when not "", names the part file that holds Runtime
	// instead (part.go): a state written in pieces, read with OpenPart.
	RuntimePart string
	// Entries is how many entries (groups, rows, keys) an operator's
	// state held, what `etld state ls` shows without decoding it; -1
	// when not known (a node that does not count them, a checkpoint of
	// format 1 or 2).
	Entries int64
	// StateTTL is the state retention (`state_ttl`) the node ran with, 0
	// for none; -1 when not known (a checkpoint of format 4 and before),
	// so that a restore can tell a changed TTL.
	StateTTL time.Duration
	// Connector is what a source's Position or a sink's Snapshot returned,
	// nil when the connector keeps no state.
	Connector []byte
}

// Checkpoint is a complete, consistent snapshot of a pipeline.
type Checkpoint struct {
	ID       int64
	Pipeline string
	Time     time.Time
	// Finished: every source had reached the end of its input and every
	// result was delivered: the pipeline has nothing left to do.
	Finished   bool
	Components []Component
	// Format is the file format version the checkpoint was read from
	// (Version when written by this etld): an operator's ID in format
	// 3 and before was its depth below its transform's result.
	Format int
}

// Version is the checkpoint file format this etld writes.
const Version = version

// Find returns the component with the ID, or nil.
func (c *Checkpoint) Find(id string) *Component {
	for i := range c.Components {
		if c.Components[i].ID == id {
			return &c.Components[i]
		}
	}
	return nil
}

// DefaultKeep is how many checkpoint files a store keeps.
const DefaultKeep = 3

// Store is one pipeline's checkpoint directory. Its methods are safe
// for concurrent use: a sink may ask for a Fence while a checkpoint is
// written.
type Store struct {
	dir  string
	keep int
	// mu serialises the writes: prune removes the temporary files of
	// interrupted writes, which must not be those of a write in progress.
	mu sync.Mutex
	// pending holds the parts written (or being written) that no
	// stored checkpoint has named yet, under mu: prune keeps them, Write
	// waits for those it names to be durable.
	pending map[string]*partSync
	// syncPart, if set, replaces the fsync of part files (SetPartSync).
	syncPart func(*os.File) error
}

// Open makes (if needed) and returns the store of pipeline under
// stateDir.
func Open(stateDir, pipeline string) (*Store, error) {
	if pipeline == "" || strings.ContainsAny(pipeline, `/\`) || pipeline == "." || pipeline == ".." {
		return nil, fmt.Errorf("checkpoint: pipeline name %q cannot name a directory", pipeline)
	}
	dir := filepath.Join(stateDir, pipeline)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return &Store{dir: dir, keep: DefaultKeep}, nil
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

const (
	magic = "ETLDCKPT"
	// 1: without RuntimePart, 2: without Entries, 3: operator IDs by
	// depth (the layout of 4), 4: without StateTTL; all still read.
	version      = 5
	manifestName = "MANIFEST"
	instanceName = "INSTANCE"
	fenceName    = "FENCE"
	filePrefix   = "chk-"
	tmpMarker    = ".tmp-"
)

type manifest struct {
	Version int    `json:"version"`
	ID      int64  `json:"id"`
	File    string `json:"file"`
	// Time is informational, for a person reading the directory.
	Time string `json:"time"`
}

func fileName(id int64) string { return fmt.Sprintf("%s%020d", filePrefix, id) }

// Write stores cp durably and makes it the newest checkpoint, once the
// parts it names are durable; it returns the size of the checkpoint
// file.
func (s *Store) Write(cp *Checkpoint) (int64, error) {
	// Its parts first: a checkpoint is stored only once every part it
	// names is durable.
	if err := s.awaitParts(cp); err != nil {
		return 0, fmt.Errorf("checkpoint %d: %w", cp.ID, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	name := fileName(cp.ID)
	size, err := s.writeFile(name, func(w io.Writer) error { return encode(w, cp) })
	if err != nil {
		return 0, fmt.Errorf("checkpoint %d: %w", cp.ID, err)
	}
	m, _ := json.Marshal(manifest{Version: version, ID: cp.ID, File: name, Time: cp.Time.UTC().Format(time.RFC3339Nano)})
	if _, err := s.writeFile(manifestName, func(w io.Writer) error {
		_, err := w.Write(append(m, '\n'))
		return err
	}); err != nil {
		return 0, fmt.Errorf("checkpoint %d: manifest: %w", cp.ID, err)
	}
	s.prune(cp)
	return size, nil
}

// writeFile writes name atomically: temporary file, fsync, rename, fsync
// of the directory.
func (s *Store) writeFile(name string, fill func(io.Writer) error) (int64, error) {
	f, n, err := s.writeTemp(name, fill)
	if err != nil {
		return 0, err
	}
	return n, s.publish(f, name, (*os.File).Sync)
}

// writeTemp writes what fill writes into a temporary file for name, of
// which it returns the open file and the size; publish makes it name.
func (s *Store) writeTemp(name string, fill func(io.Writer) error) (*os.File, int64, error) {
	f, err := os.CreateTemp(s.dir, name+tmpMarker+"*")
	if err != nil {
		return nil, 0, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	cw := &countWriter{w: bw}
	err = fill(cw)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, 0, err
	}
	return f, cw.n, nil
}

// publish makes the temporary file f durable (sync) and renames it to
// name, durably; on failure it removes f.
func (s *Store) publish(f *os.File, name string, sync func(*os.File) error) error {
	err := sync(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(s.dir, name))
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	return durable.SyncDir(s.dir)
}

// prune removes checkpoint files older than the newest keep ones,
// temporary files of interrupted writes and the parts no kept checkpoint
// names (pruneParts); newest nil: the store has no checkpoint. Failures
// only leave files behind.
func (s *Store) prune(newest *Checkpoint) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return
	}
	var files []string
	for _, e := range entries {
		n := e.Name()
		switch {
		case strings.Contains(n, tmpMarker):
			// A part being written by an operator is not an
			// interrupted write.
			if final, _, _ := strings.Cut(n, tmpMarker); s.pending[final] == nil {
				os.Remove(filepath.Join(s.dir, n))
			}
		case newest != nil && strings.HasPrefix(n, filePrefix) && n <= fileName(newest.ID):
			files = append(files, n)
		}
	}
	sort.Strings(files)
	for len(files) > s.keep {
		os.Remove(filepath.Join(s.dir, files[0]))
		files = files[1:]
	}
	oldest := int64(math.MaxInt64)
	if newest != nil {
		oldest = newest.ID
	}
	if len(files) > 0 {
		if id, err := strconv.ParseInt(strings.TrimPrefix(files[0], filePrefix), 10, 64); err == nil {
			oldest = id
		}
	}
	s.pruneParts(newest, oldest)
}

// Tidy removes what runs that ended without storing a checkpoint left
// behind (killed while writing one): temporary files and the parts that
// newest, the store's newest checkpoint (nil if none), and the ones
// kept before it cannot name. A run calls it at its start, before it
// writes anything.
func (s *Store) Tidy(newest *Checkpoint) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prune(newest)
}

// Instance returns the identity of this state directory, making it on the
// first call: a random id and the time it was made, written durably before
// Instance returns. Every run that resumes from the directory gets the
// same one, also a run after a crash before the first checkpoint; a
// removed directory gets a new one. A sink marks what it writes with it,
// so that it can tell its own earlier writes from another run's.
func (s *Store) Instance() (id string, since time.Time, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	path := filepath.Join(s.dir, instanceName)
	var inst struct {
		ID    string    `json:"id"`
		Since time.Time `json:"since"`
	}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(data, &inst); err != nil || inst.ID == "" {
			return "", time.Time{}, fmt.Errorf("checkpoint: %s is damaged: %q (remove it: the next run makes another)", path, strings.TrimSpace(string(data)))
		}
		return inst.ID, inst.Since, nil
	case !errors.Is(err, os.ErrNotExist):
		return "", time.Time{}, fmt.Errorf("checkpoint: %w", err)
	}
	var raw [8]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", time.Time{}, fmt.Errorf("checkpoint: instance id: %w", err)
	}
	inst.ID, inst.Since = hex.EncodeToString(raw[:]), time.Now().UTC().Truncate(time.Millisecond)
	data, err = json.Marshal(inst)
	if err != nil {
		return "", time.Time{}, err
	}
	if _, err := s.writeFile(instanceName, func(w io.Writer) error {
		_, err := w.Write(append(data, '\n'))
		return err
	}); err != nil {
		return "", time.Time{}, fmt.Errorf("checkpoint: write %s: %w", path, err)
	}
	return inst.ID, inst.Since, nil
}

// notePrefix starts the file name of every note.
const notePrefix = "note-"

// SetNote keeps data under name in the store's directory, durably, beside
// the checkpoints: what a run must find again even when it is killed
// before its first checkpoint (where a dead-letter file ended when the
// state began). A removed directory takes its notes with it.
func (s *Store) SetNote(name string, data []byte) error {
	if _, err := s.writeFile(notePrefix+name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}); err != nil {
		return fmt.Errorf("checkpoint: note %s: %w", name, err)
	}
	return nil
}

// Note returns what SetNote kept under name, nil when nothing.
func (s *Store) Note(name string) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(s.dir, notePrefix+name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: note %s: %w", name, err)
	}
	return data, nil
}

// Fence returns a number larger than any Fence returned before for this
// state directory, stored durably before Fence returns: the number of a
// sink's life (a run, or a part of a long one), which its writes carry
// so that the target refuses a write of an earlier life that arrives
// late, a request a killed process had sent. The number is now in Unix
// seconds, or the last one plus one when the clock is behind it (runs
// that start more often than once a second, a clock set back): a state
// directory that replaces a removed one then still numbers its lives
// above the removed one's, as long as the clock moved on since.
func (s *Store) Fence(now time.Time) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	path := filepath.Join(s.dir, fenceName)
	var last uint64
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		last, err = strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("checkpoint: %s is damaged: %q (remove it: the next run numbers its life from the clock)", path, strings.TrimSpace(string(data)))
		}
	case !errors.Is(err, os.ErrNotExist):
		return 0, fmt.Errorf("checkpoint: %w", err)
	}
	next := last + 1
	if sec := now.Unix(); sec > 0 && uint64(sec) > next {
		next = uint64(sec)
	}
	if _, err := s.writeFile(fenceName, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "%d\n", next)
		return err
	}); err != nil {
		return 0, fmt.Errorf("checkpoint: write %s: %w", path, err)
	}
	return next, nil
}

// Latest returns the newest complete checkpoint, or nil when the store
// has none.
func (s *Store) Latest() (*Checkpoint, error) {
	data, err := os.ReadFile(filepath.Join(s.dir, manifestName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil || m.Version < 1 || m.Version > version || m.File != fileName(m.ID) {
		return nil, fmt.Errorf("checkpoint: %s is damaged or of another version: %q", filepath.Join(s.dir, manifestName), strings.TrimSpace(string(data)))
	}
	path := filepath.Join(s.dir, m.File)
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: the manifest names %s: %w", m.File, err)
	}
	cp, err := decode(raw)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %s: %w", path, err)
	}
	if cp.ID != m.ID {
		return nil, fmt.Errorf("checkpoint: %s holds checkpoint %d, the manifest says %d", path, cp.ID, m.ID)
	}
	return cp, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func encode(w io.Writer, cp *Checkpoint) error {
	h := crc32.New(castagnoli)
	mw := io.MultiWriter(w, h)
	buf := []byte(magic)
	buf = append(buf, version)
	buf = binary.AppendVarint(buf, cp.ID)
	buf = binary.AppendVarint(buf, cp.Time.UnixNano())
	buf = appendBool(buf, cp.Finished)
	buf = row.AppendString(buf, cp.Pipeline)
	buf = binary.AppendUvarint(buf, uint64(len(cp.Components)))
	for _, c := range cp.Components {
		buf = row.AppendString(buf, c.ID)
		buf = row.AppendString(buf, c.Fingerprint)
		buf = appendBool(buf, c.Ended)
		buf = row.AppendString(buf, c.RuntimePart)
		buf = binary.AppendVarint(buf, c.Entries)
		buf = binary.AppendVarint(buf, int64(c.StateTTL))
		// The states may be large (an aggregate's groups, a sink's
		// pending files): each is written as it is, after its length,
		// rather than copied into buf.
		buf = binary.AppendUvarint(buf, uint64(len(c.Runtime)))
		if err := writeAll(mw, buf, c.Runtime); err != nil {
			return err
		}
		buf = appendBool(buf[:0], c.Connector != nil)
		buf = binary.AppendUvarint(buf, uint64(len(c.Connector)))
		if err := writeAll(mw, buf, c.Connector); err != nil {
			return err
		}
		buf = buf[:0]
	}
	if _, err := mw.Write(buf); err != nil {
		return err
	}
	_, err := w.Write(binary.LittleEndian.AppendUint32(nil, h.Sum32()))
	return err
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func writeAll(w io.Writer, bufs ...[]byte) error {
	for _, b := range bufs {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func decode(raw []byte) (*Checkpoint, error) {
	if len(raw) < len(magic)+1+4 || string(raw[:len(magic)]) != magic {
		return nil, errors.New("not an etld checkpoint file")
	}
	body, sum := raw[:len(raw)-4], binary.LittleEndian.Uint32(raw[len(raw)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, errors.New("checksum mismatch: the file is damaged")
	}
	v := body[len(magic)]
	if v < 1 || v > version {
		return nil, fmt.Errorf("format version %d, this etld reads 1 to %d", v, version)
	}
	d := row.NewDecoder(body[len(magic)+1:])
	cp := &Checkpoint{ID: d.Varint(), Format: int(v)}
	cp.Time = time.Unix(0, d.Varint())
	cp.Finished = readBool(d)
	cp.Pipeline = d.Str()
	cp.Components = make([]Component, d.Count(6))
	for i := range cp.Components {
		c := &cp.Components[i]
		c.ID = d.Str()
		c.Fingerprint = d.Str()
		c.Ended = readBool(d)
		if v >= 2 {
			c.RuntimePart = d.Str()
		}
		c.Entries = -1
		if v >= 3 {
			c.Entries = d.Varint()
		}
		c.StateTTL = -1
		if v >= 5 {
			c.StateTTL = time.Duration(d.Varint())
		}
		c.Runtime = nilIfEmpty(d.Bytes())
		// A connector without state (nil) differs from one whose state
		// is empty; the flag keeps them apart. Bytes is never nil when
		// decoding succeeds.
		has := readBool(d)
		if conn := d.Bytes(); has {
			c.Connector = conn
		}
	}
	if err := d.End(); err != nil {
		return nil, err
	}
	return cp, nil
}

func readBool(d *row.Decoder) bool {
	b := d.Byte()
	if b > 1 {
		d.Fail("flag %d", b)
	}
	return b == 1
}

func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}
