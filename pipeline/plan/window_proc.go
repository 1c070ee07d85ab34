package plan

import "github.com/etld/etld/pipeline/sql"

// procWindowAllowed refuses the processing-time windows etld does not
// run: SESSION (TUMBLE, HOP and CUMULATE run on windowop.ProcWindowAgg)
// and any in batch mode, where a bounded input has no wall clock to
// close windows by and Flink's batch window aggregate takes event time
// only.
func procWindowAllowed(w *sql.WindowTVF, batch bool) error {
	switch {
	case w.Kind == sql.Session:
		return errAt(w.TimeCol.At, "a SESSION window on the processing-time attribute %q is not supported: etld runs TUMBLE, HOP and CUMULATE on processing time, SESSION on an event-time attribute (declare `watermark:` on the source)", w.TimeCol.Name)
	case batch:
		return errAt(w.TimeCol.At, "%s on the processing-time attribute %q cannot run in batch mode: window on an event-time attribute (declare `watermark:` on the source) or run the pipeline in streaming mode", w.Kind, w.TimeCol.Name)
	}
	return nil
}

// errProcWindowTable refuses a processing-time window TVF read as a
// table (a plain SELECT, a window Top-N or a window join), as Flink 2.3
// refuses its WindowTableFunction on processing time.
func errProcWindowTable(w *sql.WindowTVF) error {
	return errAt(w.TimeCol.At, "processing-time Window TableFunction is not supported yet, as in Flink: a %s on the processing-time attribute %q must be followed by a GROUP BY window_start, window_end (a window aggregate)", w.Kind, w.TimeCol.Name)
}
