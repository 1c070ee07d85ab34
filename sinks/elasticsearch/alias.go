package elasticsearch

// Fencing through write aliases.
//
// A bulk request that a killed (or frozen) process had sent can reach
// Elasticsearch after the restarted run started: it would put back older
// values, documents the new run deleted, or intermediate results the new
// run never writes. In upsert mode with a state directory each life of
// the sink therefore writes through aliases of its own, one per index,
// named
//
//	<index>~etld~<pipeline>~<sink>~<fence>
//
// (the fence is the life's number from the state directory, larger in
// every life), hidden, and every bulk request says require_alias=true: an
// action whose alias is missing is refused (index_not_found_exception),
// never written to an index made up on the spot, deletes included. At
// Open, in one _aliases request, the life removes every alias of the
// sink's earlier lives, on every index, and adds its own to a static
// index; for an index pattern it adds its alias to each index before its
// first write to it. From then on a late request of an earlier life finds
// its alias gone, whatever documents it touches. A life that finds its
// own alias gone (a frozen process woken up after a newer life started)
// stops; so does one that finds a later life's alias at Open. With an
// index pattern, a frozen life that first writes to an index after a
// newer life started adds its alias there beside the newer one's: it is
// fenced off the indices it had written before. A killed process is
// fenced off all of them: it sends a bulk request to an index only once
// its alias request was answered, which the new life's start removes (an
// alias request of it held up in the network while the process sent it
// again on another connection would, arriving late, bring the alias back
// on that index).
//
// An index option that is itself an alias gets the sink's alias on its
// write index (its only index, or the one marked is_write_index), as
// found when the sink first writes to it in the life: a rollover takes
// effect at the next start. A cluster that refuses to list or change
// aliases at Open (no manage privilege on the index) leaves the life
// unfenced, with a warning; one that refuses to add an alias to an index
// of a pattern stops the pipeline.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/etld/etld/internal/retry"
)

// maxName is the longest index or alias name Elasticsearch takes, in
// bytes.
const maxName = 255

// errRefused is a cluster's refusal (401, 403) of the alias requests.
var errRefused = errors.New("refused")

// aliasMark is what the sink's aliases of every life share after the
// index's name: the pipeline and the sink, neither of which may hold a ~.
func (s *Sink) aliasMark() string {
	return "~etld~" + s.run.Pipeline + "~" + s.name + "~"
}

// aliasOf is index's write alias in this life.
func (s *Sink) aliasOf(index string) string {
	suffix := s.aliasMark() + strconv.FormatUint(s.fence, 10)
	if len(index)+len(suffix) > maxName {
		sum := sha256.Sum256([]byte(index))
		index = hex.EncodeToString(sum[:8])
	}
	return index + suffix
}

// aliasFence is the fence of one of the sink's aliases, false for an
// alias that is not one.
func (s *Sink) aliasFence(alias string) (uint64, bool) {
	mark := s.aliasMark()
	i := strings.LastIndex(alias, mark)
	if i < 0 {
		return 0, false
	}
	f, err := strconv.ParseUint(alias[i+len(mark):], 10, 64)
	return f, err == nil
}

// aliasAction is one action of an _aliases request.
type aliasAction map[string]map[string]any

func removeAlias(index, alias string) aliasAction {
	return aliasAction{"remove": {"index": index, "alias": alias}}
}

func addAlias(index, alias string) aliasAction {
	return aliasAction{"add": {"index": index, "alias": alias, "is_hidden": true}}
}

// takeOver makes this life the sink's only one: in one request it removes
// the aliases of the earlier lives and, for a static index, adds this
// life's. A later life's alias is an error. errRefused when the cluster
// does not let the sink list or change aliases.
func (s *Sink) takeOver(ctx context.Context) error {
	res, err := s.client.Indices.GetAlias(s.client.Indices.GetAlias.WithContext(ctx),
		s.client.Indices.GetAlias.WithName("*"+s.aliasMark()+"*"),
		s.client.Indices.GetAlias.WithExpandWildcards("all"))
	if err != nil {
		return fmt.Errorf("list the sink's aliases: %w", err)
	}
	var found map[string]struct {
		Aliases map[string]json.RawMessage `json:"aliases"`
	}
	err = readJSON(res, &found, http.StatusNotFound)
	if err != nil {
		return fmt.Errorf("list the sink's aliases: %w", err)
	}
	var actions []aliasAction
	for index, a := range found {
		for alias := range a.Aliases {
			f, ok := s.aliasFence(alias)
			switch {
			case !ok:
			case f > s.fence:
				return retry.Permanent(fmt.Errorf("index %s has alias %s of a later run of this pipeline (life %d; this one is %d): another process runs it on this state directory, or the state directory was made anew while the clock was behind", index, alias, f, s.fence))
			case f < s.fence:
				actions = append(actions, removeAlias(index, alias))
			}
		}
	}
	if s.cfg.index.static() {
		name := s.cfg.index.prefix
		target, err := s.writeIndex(ctx, name)
		if err != nil {
			return err
		}
		actions = append(actions, addAlias(target, s.aliasOf(name)))
	}
	if len(actions) == 0 {
		return nil
	}
	return s.updateAliases(ctx, actions)
}

// addLifeAlias adds this life's alias to an index of a pattern.
func (s *Sink) addLifeAlias(ctx context.Context, index string) error {
	target, err := s.writeIndex(ctx, index)
	if err == nil {
		err = s.updateAliases(ctx, []aliasAction{addAlias(target, s.aliasOf(index))})
	}
	if err != nil {
		return fmt.Errorf("index %s: add the run's write alias: %w", index, err)
	}
	return nil
}

// writeIndex is the index that writes to name go to: name itself, or
// when name is an alias its only index or its write index.
func (s *Sink) writeIndex(ctx context.Context, name string) (string, error) {
	res, err := s.client.Indices.GetAlias(s.client.Indices.GetAlias.WithContext(ctx),
		s.client.Indices.GetAlias.WithName(name))
	if err != nil {
		return "", fmt.Errorf("is %s an alias: %w", name, err)
	}
	var found map[string]struct {
		Aliases map[string]struct {
			Write *bool `json:"is_write_index"`
		} `json:"aliases"`
	}
	if err := readJSON(res, &found, http.StatusNotFound); err != nil {
		return "", fmt.Errorf("is %s an alias: %w", name, err)
	}
	if len(found) == 0 {
		return name, nil
	}
	var indices []string
	for index, a := range found {
		indices = append(indices, index)
		if w := a.Aliases[name].Write; w != nil && *w {
			return index, nil
		}
	}
	if len(indices) == 1 {
		return indices[0], nil
	}
	return "", retry.Permanent(fmt.Errorf("index %s is an alias of %d indices (%s) without a write index: writes to it have nowhere to go", name, len(indices), strings.Join(indices, ", ")))
}

// updateAliases runs the actions in one _aliases request. A remove of an
// alias that is gone already is no error.
func (s *Sink) updateAliases(ctx context.Context, actions []aliasAction) error {
	body, err := json.Marshal(map[string]any{"actions": actions})
	if err != nil {
		return err
	}
	res, err := s.client.Indices.UpdateAliases(bytes.NewReader(body), s.client.Indices.UpdateAliases.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("update aliases: %w", err)
	}
	var resp struct {
		Results []struct {
			Status int        `json:"status"`
			Error  *itemError `json:"error"`
		} `json:"action_results"`
	}
	if err := readJSON(res, &resp); err != nil {
		return fmt.Errorf("update aliases: %w", err)
	}
	for _, r := range resp.Results {
		if r.Error != nil && r.Error.Type != "aliases_not_found_exception" {
			return retry.Permanent(fmt.Errorf("update aliases: %s", r.Error))
		}
	}
	return nil
}

// readJSON decodes a response's body into v; a status in empty answers
// nothing (v left as it is). 401 and 403 are errRefused; failures are
// worth a retry when transient, permanent otherwise.
func readJSON(res *esapi.Response, v any, empty ...int) error {
	defer res.Body.Close()
	for _, st := range empty {
		if res.StatusCode == st {
			_, _ = io.Copy(io.Discard, res.Body)
			return nil
		}
	}
	if res.StatusCode >= 300 {
		msg, _ := io.ReadAll(io.LimitReader(res.Body, 512))
		err := fmt.Errorf("HTTP %d: %s", res.StatusCode, bytes.TrimSpace(msg))
		switch {
		case res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden:
			return retry.Permanent(fmt.Errorf("%w: %v", errRefused, err))
		case transient(res.StatusCode):
			return err
		}
		return retry.Permanent(err)
	}
	return json.NewDecoder(res.Body).Decode(v)
}

// aliasGone reports whether a bulk item was refused because the alias it
// went through does not exist.
func aliasGone(r *itemResult) bool {
	return r.Status == http.StatusNotFound && r.Error != nil && r.Error.Type == "index_not_found_exception"
}
