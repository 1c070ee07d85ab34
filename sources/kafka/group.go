package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/etld/etld/internal/retry"
)

// The source is a consumer group member of its own making, over
// kafka-go's Client (JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
// OffsetCommit), because kafka-go's ConsumerGroup speaks JoinGroup v1/v2,
// which cannot carry a static member id (group.instance.id, KIP-345).
// Without one, a process killed with SIGKILL stays in the group until its
// session times out, and its restart waits that long for the partitions.
// With one, the restart takes the killed member's place at once.
//
// A generation: join (the leader assigns the partitions with kafka-go's
// range balancer, as Kafka's consumers do by default), sync, then
// heartbeat every third of the session until the coordinator announces a
// rebalance, the member is unknown or fenced, or the source closes. A
// graceful stop leaves the group, so that the partitions move on at once
// even without a restart.

// Group timing. The rebalance timeout is how long the coordinator waits
// for the members to rejoin during a rebalance; a live member learns of
// the rebalance at its next heartbeat.
const (
	defaultSession   = 30 * time.Second
	rebalanceTimeout = 30 * time.Second
	joinBackoff      = time.Second
	leaveTimeout     = 5 * time.Second
	maxHeartbeat     = 3 * time.Second
	// revokeCommitWait bounds the wait for a checkpoint before giving
	// the partitions up on a rebalance (and at most half the session).
	revokeCommitWait = 10 * time.Second
	protocolType     = "consumer"
)

// generation is one generation of the group, as this member sees it.
type generation struct {
	id         int
	memberID   string
	instanceID string
	assigned   map[string][]int
	ctx        context.Context // ended with the generation
	cancel     context.CancelFunc
	client     *kafka.Client
	groupID    string
}

// commit commits offsets for the generation.
func (g *generation) commit(ctx context.Context, offsets map[string]map[int]int64) error {
	req := &kafka.OffsetCommitRequest{GroupID: g.groupID, GenerationID: g.id, MemberID: g.memberID, InstanceID: g.instanceID, Topics: map[string][]kafka.OffsetCommit{}}
	for topic, parts := range offsets {
		for partition, off := range parts {
			req.Topics[topic] = append(req.Topics[topic], kafka.OffsetCommit{Partition: partition, Offset: off})
		}
	}
	res, err := g.client.OffsetCommit(ctx, req)
	if err != nil {
		return err
	}
	return commitError(res)
}

// runGroup is a member of the group until ctx ends, reading what each
// generation assigns; it leaves the group when ctx ends.
func (s *Source) runGroup(ctx context.Context) error {
	client := &kafka.Client{Addr: kafka.TCP(s.opts.brokers...), Transport: s.transport}
	session := s.opts.session
	if session == 0 {
		session = defaultSession
	}
	memberID := ""
	// A fenced member leaves nothing: its place is the other one's now.
	fenced := false
	defer func() {
		if !fenced {
			s.leave(client, memberID)
		}
	}()
	failing := false
	first := true
	for {
		gen, err := s.join(ctx, client, memberID, session)
		if gen != nil {
			memberID = gen.memberID
		}
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return nil
			case errors.Is(err, kafka.FencedInstanceID):
				fenced = true
				return s.fenced()
			case errors.Is(err, kafka.UnknownMemberId):
				memberID = ""
			}
			if !failing {
				s.log.Warn("kafka source: cannot join the consumer group yet; retrying", "group", s.opts.groupID, "error", err.Error())
				failing = true
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(joinBackoff):
			}
			continue
		}
		if failing {
			s.log.Info("kafka source: joined the consumer group", "group", s.opts.groupID)
			failing = false
		}
		if err := s.checkShare(gen, first); err != nil {
			gen.cancel()
			return err // the deferred leave hands the partitions back
		}
		first = false
		done := s.assign(gen)
		err = s.heartbeat(gen, client, session)
		if errors.Is(err, kafka.RebalanceInProgress) && ctx.Err() == nil {
			s.commitBeforeRevoke(gen, session)
		}
		gen.cancel()
		<-done
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, kafka.FencedInstanceID):
			fenced = true
			return s.fenced()
		case errors.Is(err, kafka.UnknownMemberId):
			memberID = ""
		}
		if err != nil && !errors.Is(err, kafka.RebalanceInProgress) {
			s.log.Info("kafka source: generation ended; rejoining the group", "group", s.opts.groupID, "generation", gen.id, "error", err.Error())
		}
	}
}

// fenced is the error of a member another one replaced under the same
// group_instance_id. It is permanent: restarting would fence the other
// in turn, and the two would take the partitions from each other
// forever.
func (s *Source) fenced() error {
	return retry.Permanent(fmt.Errorf("consumer group %q: another member joined with the same group_instance_id %q and took this one's place: two processes share it (the same state directory, or the same group_instance_id); give every process of the group its own state directory or group_instance_id", s.opts.groupID, s.opts.instanceID))
}

// join joins the group and syncs: the generation, with the partitions
// assigned to this member. The returned generation may be non-nil with an
// error: it carries the member id the coordinator gave.
func (s *Source) join(ctx context.Context, client *kafka.Client, memberID string, session time.Duration) (*generation, error) {
	req := &kafka.JoinGroupRequest{
		GroupID:          s.opts.groupID,
		SessionTimeout:   session,
		RebalanceTimeout: rebalanceTimeout,
		MemberID:         memberID,
		GroupInstanceID:  s.opts.instanceID,
		ProtocolType:     protocolType,
		Protocols: []kafka.GroupProtocol{{
			Name:     kafka.RangeGroupBalancer{}.ProtocolName(),
			Metadata: kafka.GroupProtocolSubscription{Topics: s.opts.topics},
		}},
	}
	// The coordinator holds a join until every member has rejoined.
	jctx, cancel := context.WithTimeout(ctx, rebalanceTimeout+session)
	defer cancel()
	res, err := client.JoinGroup(jctx, req)
	if err == nil && errors.Is(res.Error, kafka.MemberIDRequired) {
		// A dynamic member's first join only fetches its id (KIP-394).
		req.MemberID = res.MemberID
		res, err = client.JoinGroup(jctx, req)
	}
	if err == nil {
		err = res.Error
	}
	if err != nil {
		return nil, fmt.Errorf("join: %w", err)
	}
	gen := &generation{id: res.GenerationID, memberID: res.MemberID, instanceID: s.opts.instanceID, client: client, groupID: s.opts.groupID}
	var assignments []kafka.SyncGroupRequestAssignment
	if res.LeaderID == res.MemberID {
		if assignments, err = s.assignAll(jctx, client, res); err != nil {
			return gen, fmt.Errorf("assign the partitions: %w", err)
		}
	}
	sres, err := client.SyncGroup(jctx, &kafka.SyncGroupRequest{
		GroupID:         s.opts.groupID,
		GenerationID:    res.GenerationID,
		MemberID:        res.MemberID,
		GroupInstanceID: s.opts.instanceID,
		ProtocolType:    protocolType,
		ProtocolName:    res.ProtocolName,
		Assignments:     assignments,
	})
	if err == nil {
		err = sres.Error
	}
	if err != nil {
		return gen, fmt.Errorf("sync: %w", err)
	}
	gen.assigned = sres.Assignment.AssignedPartitions
	gen.ctx, gen.cancel = context.WithCancel(ctx)
	return gen, nil
}

// assignAll is the leader's part: the range balancer over the partitions
// of every topic some member subscribes to. Static members come first, in
// the order of their group_instance_id, as in Kafka's own range assignor:
// the broker gives a member a new random member id on every join, and an
// order by it would hand a restarted process other partitions than it had.
func (s *Source) assignAll(ctx context.Context, client *kafka.Client, res *kafka.JoinGroupResponse) ([]kafka.SyncGroupRequestAssignment, error) {
	members := make([]kafka.GroupMember, 0, len(res.Members))
	topics := map[string]bool{}
	// The balancer orders members by ID: give it a key in the order
	// wanted, and map its answer back to the member ids.
	byKey := make(map[string]string, len(res.Members))
	for _, m := range res.Members {
		key := "1" + m.ID
		if m.GroupInstanceID != "" {
			key = "0" + m.GroupInstanceID + "\x00" + m.ID
		}
		byKey[key] = m.ID
		members = append(members, kafka.GroupMember{ID: key, Topics: m.Metadata.Topics, UserData: m.Metadata.UserData})
		for _, t := range m.Metadata.Topics {
			topics[t] = true
		}
	}
	req := &kafka.MetadataRequest{}
	for t := range topics {
		req.Topics = append(req.Topics, t)
	}
	md, err := client.Metadata(ctx, req)
	if err != nil {
		return nil, err
	}
	var partitions []kafka.Partition
	for _, t := range md.Topics {
		if t.Error != nil {
			return nil, fmt.Errorf("topic %q: %w", t.Name, t.Error)
		}
		partitions = append(partitions, t.Partitions...)
	}
	var out []kafka.SyncGroupRequestAssignment
	for key, byTopic := range (kafka.RangeGroupBalancer{}).AssignGroups(members, partitions) {
		out = append(out, kafka.SyncGroupRequestAssignment{MemberID: byKey[key], Assignment: kafka.GroupProtocolAssignment{AssignedPartitions: byTopic}})
	}
	return out, nil
}

// heartbeat keeps the generation alive until it ends: the coordinator
// answers a rebalance, an unknown member or a fenced instance, the
// coordinator stays unreachable for a whole session, or gen.ctx ends.
func (s *Source) heartbeat(gen *generation, client *kafka.Client, session time.Duration) error {
	// A third of the session, as Kafka's clients do, and at most their 3s
	// default: a live member learns of a rebalance at its next heartbeat,
	// and the whole group waits for the slowest to rejoin.
	every := min(session/3, maxHeartbeat)
	tick := time.NewTicker(every)
	defer tick.Stop()
	last := time.Now()
	for {
		select {
		case <-gen.ctx.Done():
			return gen.ctx.Err()
		case <-tick.C:
		}
		hctx, cancel := context.WithTimeout(gen.ctx, every)
		res, err := client.Heartbeat(hctx, &kafka.HeartbeatRequest{
			GroupID: s.opts.groupID, GenerationID: int32(gen.id), MemberID: gen.memberID, GroupInstanceID: gen.instanceID,
		})
		cancel()
		if err == nil {
			err = responseError(res.Error, res.Throttle)
		}
		var ke kafka.Error
		switch {
		case err == nil:
			last = time.Now()
		case gen.ctx.Err() != nil:
			return gen.ctx.Err()
		case errors.As(err, &ke):
			return err // the coordinator's answer: rebalance, unknown, fenced
		case time.Since(last) > session:
			return fmt.Errorf("heartbeat: no answer for a whole session: %w", err)
		}
	}
}

// assign starts readers for a generation's partitions, bound to the
// generation: they stop when it ends, and the partitions are then no
// longer ours until the next generation says so. The channel closes once
// they have stopped after the generation ended.
func (s *Source) assign(gen *generation) <-chan struct{} {
	done := make(chan struct{})
	var tps []topicPartition
	for topic, ps := range gen.assigned {
		for _, p := range ps {
			tps = append(tps, topicPartition{topic, p})
		}
	}
	go func() {
		defer close(done)
		var committed map[topicPartition]int64
		var starts map[topicPartition]int64
		err := retry.Do(gen.ctx, assignBackoff, s.log, "kafka source: reading start offsets", func(ctx context.Context) error {
			s.mu.Lock()
			for _, tp := range tps {
				if s.parts[tp] == nil {
					s.parts[tp] = newPart(tp) // a partition added after start
				}
			}
			s.mu.Unlock()
			var err error
			if committed == nil {
				if committed, err = s.committedOffsets(ctx, tps); err != nil {
					return err
				}
			}
			starts, err = s.startOffsets(ctx, tps, committed)
			return err
		})
		if err != nil {
			if gen.ctx.Err() == nil {
				// Give the partitions back; the group tries again.
				s.log.Warn("kafka source: cannot place the assigned partitions; rejoining the group", "error", err.Error())
				gen.cancel()
			}
			return
		}
		s.log.Info("kafka source: partitions assigned", "group", s.opts.groupID, "generation", gen.id, "partitions", fmt.Sprint(tps))
		var wg sync.WaitGroup
		s.mu.Lock()
		readers := make(map[*part]*partReader, len(tps))
		for _, tp := range tps {
			p := s.parts[tp]
			rd, err := s.startReader(gen.ctx, &wg, p, starts[tp])
			if err != nil {
				s.log.Error("kafka source: cannot read an assigned partition", "partition", tp.String(), "error", err.Error())
				continue
			}
			readers[p] = rd
		}
		s.gen = gen
		s.mu.Unlock()
		s.assigned.Store(true)
		s.signal()

		<-gen.ctx.Done()
		s.mu.Lock()
		s.assigned.Store(false)
		s.gen = nil
		for p, rd := range readers {
			p.cur.CompareAndSwap(rd, nil)
		}
		s.mu.Unlock()
		wg.Wait()
		s.signal()
	}()
	return done
}

// leave leaves the group on a graceful stop, so that the partitions move
// to the other members now rather than after the session timeout.
func (s *Source) leave(client *kafka.Client, memberID string) {
	if memberID == "" && s.opts.instanceID == "" {
		return // never joined
	}
	ctx, cancel := context.WithTimeout(context.Background(), leaveTimeout)
	defer cancel()
	res, err := client.LeaveGroup(ctx, &kafka.LeaveGroupRequest{
		GroupID: s.opts.groupID,
		Members: []kafka.LeaveGroupRequestMember{{ID: memberID, GroupInstanceID: s.opts.instanceID}},
	})
	if err == nil {
		err = responseError(res.Error, res.Throttle)
		for _, m := range res.Members {
			if err == nil {
				err = m.Error
			}
		}
	}
	if err != nil && !errors.Is(err, kafka.UnknownMemberId) {
		s.log.Warn("kafka source: could not leave the consumer group; its partitions move on when the session times out", "group", s.opts.groupID, "error", err.Error())
		return
	}
	s.log.Info("kafka source: left the consumer group", "group", s.opts.groupID)
}

// responseError is the error code of a Heartbeat or LeaveGroup response.
// kafka-go v0.4.51 declares those responses' fields in the wrong order
// (error_code before throttle_time_ms, where versions 1 and later send
// the throttle first), so its Error is always nil and the error code
// lands in the low 16 bits of the throttle it reports. Without this, a
// member never hears of a rebalance and is thrown out of the group after
// the rebalance timeout instead.
func responseError(err error, throttle time.Duration) error {
	if err != nil {
		return err
	}
	if code := int16(int64(throttle/time.Millisecond) & 0xffff); code != 0 {
		return kafka.Error(code)
	}
	return nil
}

// revokeWait is a commit the group goroutine waits for before it gives
// the partitions up: the offsets each partition must be committed to.
type revokeWait struct {
	target map[topicPartition]int64
	done   chan struct{}
}

// AskCheckpoints implements connector.CheckpointAsker.
func (s *Source) AskCheckpoints(ask func()) { s.ask = ask }

// commitBeforeRevoke runs when the coordinator announces a rebalance,
// which takes every partition of this member away (the eager protocol)
// until the next generation hands some back. Before rejoining, it asks
// the runtime for a checkpoint and waits, a bounded time, for its Commit:
// still in this generation, which the broker accepts while it waits for
// the members to rejoin, it commits what the sinks have of every row Read
// returned so far. The partitions' next owners then start after those
// rows instead of at the last checkpoint's offsets, and read none of
// them again. Without an answer in time (a slow sink) the rebalance goes
// on: those rows are read again (at least once), nothing is lost.
func (s *Source) commitBeforeRevoke(gen *generation, session time.Duration) {
	if s.ask == nil {
		return
	}
	w := &revokeWait{target: map[topicPartition]int64{}, done: make(chan struct{})}
	s.mu.Lock()
	for tp, p := range s.parts {
		if p.cur.Load() == nil {
			continue
		}
		if next := p.next.Load(); next >= 0 && next > p.committed.Load() {
			w.target[tp] = next
		}
	}
	if len(w.target) > 0 {
		s.revoke = w
	}
	s.mu.Unlock()
	if len(w.target) == 0 {
		return // everything read is committed already
	}
	defer func() {
		s.mu.Lock()
		s.revoke = nil
		s.mu.Unlock()
	}()
	// Within the session, so that the member is still one when it
	// commits; the group waits for it to rejoin meanwhile.
	wait := min(session/2, revokeCommitWait)
	s.ask()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-w.done:
		s.log.Info("kafka source: committed what the sinks have before the rebalance", "group", s.opts.groupID, "generation", gen.id, "partitions", len(w.target))
	case <-t.C:
		s.log.Warn("kafka source: no checkpoint completed before the rebalance; the rows read since the last commit are read again by the partitions' next owners", "group", s.opts.groupID, "waited", wait.String())
	case <-gen.ctx.Done():
	}
}

// committedUpTo records a successful commit of offs in generation gen,
// and ends a revokeWait it satisfies. The caller holds no lock.
func (s *Source) committedUpTo(offs map[string]map[int]int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for topic, parts := range offs {
		for partition, off := range parts {
			tp := topicPartition{topic, partition}
			if p := s.parts[tp]; p != nil && off > p.committed.Load() {
				p.committed.Store(off)
			}
			if w := s.revoke; w != nil {
				if want, ok := w.target[tp]; ok && off >= want {
					delete(w.target, tp)
				}
			}
		}
	}
	if w := s.revoke; w != nil && len(w.target) == 0 {
		close(w.done)
		s.revoke = nil
	}
}
