package pipeline

import "github.com/etld/etld/pipeline/runtime"

// DumpLive lists the state on's operator holds now, as DumpState lists
// a checkpoint's: tests compare the two.
func (p *Pipeline) DumpLive(on *runtime.OpNode, d *StateDump) error { return p.dumpOp(on, d) }
