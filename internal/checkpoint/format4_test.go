package checkpoint

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/etld/etld/pipeline/row"
)

// A checkpoint file of format 4, written before the state TTL was
// recorded, still reads: its components' StateTTL is -1 (not known),
// so a restore does not take a TTL of 0 for one that was set.
func TestFormat4ReadsWithoutStateTTL(t *testing.T) {
	buf := []byte(magic)
	buf = append(buf, 4)
	buf = binary.AppendVarint(buf, 7)             // ID
	buf = binary.AppendVarint(buf, 1_700_000_000) // time
	buf = appendBool(buf, false)                  // finished
	buf = row.AppendString(buf, "p")
	buf = binary.AppendUvarint(buf, 1)
	buf = row.AppendString(buf, "transform/q/group_aggregate#1")
	buf = row.AppendString(buf, "fp")
	buf = appendBool(buf, false)    // ended
	buf = row.AppendString(buf, "") // runtime part
	buf = binary.AppendVarint(buf, 3)
	buf = binary.AppendUvarint(buf, 2)
	buf = append(buf, 1, 2)
	buf = appendBool(buf, false)
	buf = binary.AppendUvarint(buf, 0)
	buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf, castagnoli))
	cp, err := decode(buf)
	if err != nil {
		t.Fatal(err)
	}
	if c := cp.Components[0]; cp.Format != 4 || c.StateTTL != -1 || c.Entries != 3 || string(c.Runtime) != "\x01\x02" {
		t.Errorf("format %d, component %+v", cp.Format, c)
	}
}
