package operator

// LateReporter is an operator that drops late rows (behind the
// watermark) and can say which, so that the pipeline's late_rows policy
// keeps them instead of only counting them. The node calls ReportLate
// once, before the first batch, with the function the operator calls
// during Process with the index in the input batch of each row it drops
// as late.
type LateReporter interface {
	ReportLate(report func(i int))
}

// Late is the embeddable LateReporter: an operator says which change of
// its input it is at (At) and calls Drop for a row it drops as late.
type Late struct {
	report func(int)
	at     int
}

// ReportLate implements LateReporter.
func (l *Late) ReportLate(report func(i int)) { l.report = report }

// At says that the operator is at change i of its input batch.
func (l *Late) At(i int) { l.at = i }

// Drop reports the change the operator is at as late.
func (l *Late) Drop() {
	if l.report != nil {
		l.report(l.at)
	}
}
