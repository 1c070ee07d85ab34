package kafka

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/etld/etld/internal/retry"
	"github.com/etld/etld/pipeline/connector"
)

// Several etld processes on one consumer group: each reads the
// partitions the group assigns it, so each sees a share of the rows. For
// a pipeline whose operators look at one row at a time (projection,
// filter) the shares add up to the whole; for one with an operator that
// keeps state (GROUP BY, a window, DISTINCT) each process would hold the
// state of its share alone and write results that are neither the
// whole's nor stable across rebalances. Flink keys such state across its
// workers; etld does not, and says so.
//
// How "shared" is known: group_shared: true declares it, so that the
// planner refuses a stateful pipeline with the option's position before
// anything runs (predictable, as Flink's plan-time checks are). Detection
// is the safety net for a file that does not declare it: a source under
// a stateful operator that finds, in its first generation, other members
// holding partitions of its topics fails before reading any of them and
// leaves the group. Only the first generation: a process that was alone
// and then sees a newcomer take partitions keeps reading what it is
// given (the newcomer, if it is such an etld process, refuses and leaves,
// and the partitions come back), so that one misconfigured start does
// not stop a healthy process.

// exportHint points at the way to run a stateful pipeline on many
// machines.
const exportHint = "run it in one process per group_id, or on Flink, which splits state by key across its workers: `etld export flink FILE` writes the Flink SQL script"

// SetRun implements connector.RunAware: the run's state directory
// identity names the default static member.
func (s *Source) SetRun(info connector.RunInfo) { s.runInfo = info }

// SharedOption implements connector.SharedSource.
func (s *Source) SharedOption() string {
	if s.opts.shared {
		return "group_shared"
	}
	return ""
}

// KeepsState implements connector.SharedSource.
func (s *Source) KeepsState(why string) { s.keepsState = why }

// instanceFor is the static member id of this run: the explicit
// group_instance_id, or the default named after the state directory's
// instance (see the package doc), or "" for a dynamic member.
func (o *options) instanceFor(run connector.RunInfo) string {
	switch {
	case !o.defaultInstance:
		return o.instanceID
	case run.Instance != "":
		return memberName(o.pipeline, o.source, run.Instance)
	case o.shared:
		// Nothing tells this process's slot from another one's on the
		// same host: a host-based id would make them fence each other.
		return ""
	}
	return defaultInstanceID(o.pipeline, o.source)
}

// defaultInstanceID is the static member id of a source that names none
// in a run without a state directory and a group it does not share: the
// same for the same pipeline and source on the same host, so that a
// restart takes the place of the process it replaces.
func defaultInstanceID(pipeline, source string) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return memberName(pipeline, source, host)
}

// memberName is etld-<pipeline>-<source>-<slot> in the characters a
// member id may have.
func memberName(pipeline, source, slot string) string {
	id := "etld-" + pipeline + "-" + source + "-" + slot
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, id)
}

// othersHold lists the partitions of the source's topics that the
// generation assigned to other members, in order. It runs on the group
// goroutine, which alone writes s.parts.
func (s *Source) othersHold(gen *generation) []string {
	mine := map[topicPartition]bool{}
	for topic, ps := range gen.assigned {
		for _, p := range ps {
			mine[topicPartition{topic, p}] = true
		}
	}
	var out []string
	for tp := range s.parts {
		if !mine[tp] {
			out = append(out, tp.String())
		}
	}
	sort.Strings(out)
	return out
}

// checkShare looks at a generation's assignment: first tells whether it
// is the first generation this process joined. It returns the error that
// stops a stateful source reading a share.
func (s *Source) checkShare(gen *generation, first bool) error {
	others := s.othersHold(gen)
	if len(others) == 0 {
		return nil
	}
	if s.keepsState != "" && first {
		return retry.Permanent(fmt.Errorf("consumer group %q: other members hold partitions %s of this source's topics, so this process would read only a share of the rows; but %s keeps state, which would then hold this process's share alone: %s",
			s.opts.groupID, listShort(others), s.keepsState, exportHint))
	}
	if s.keepsState != "" {
		s.log.Warn("kafka source: another member took partitions of this source's topics, and an operator downstream keeps state: its results now cover this process's share only; run one process per group_id",
			"group", s.opts.groupID, "others", listShort(others), "state", s.keepsState)
		return nil
	}
	s.log.Info("kafka source: sharing the group's partitions with other members", "group", s.opts.groupID, "generation", gen.id, "others", listShort(others))
	return nil
}

// listShort joins names, at most eight of them.
func listShort(names []string) string {
	if len(names) > 8 {
		return strings.Join(names[:8], ", ") + fmt.Sprintf(" and %d more", len(names)-8)
	}
	return strings.Join(names, ", ")
}

var (
	_ connector.RunAware        = (*Source)(nil)
	_ connector.SharedSource    = (*Source)(nil)
	_ connector.CheckpointAsker = (*Source)(nil)
)
