package testenv

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// ElasticsearchIndex returns an index name unique to the call, for the
// node at url (ElasticsearchURL(t)), and deletes, when the test ends,
// every index whose name starts with it: a sink whose index pattern
// routes rows by date makes name-2024.01.02 and the like. It creates
// nothing.
func ElasticsearchIndex(t testing.TB, url, prefix string) string {
	t.Helper()
	name := UniqueName(t, prefix)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, strings.TrimRight(url, "/")+"/"+name+"*?expand_wildcards=all", nil)
		if err != nil {
			t.Errorf("delete indices %s*: %v", name, err)
			return
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("delete indices %s*: %v", name, err)
			return
		}
		defer res.Body.Close()
		if body, _ := io.ReadAll(res.Body); res.StatusCode >= 300 {
			t.Errorf("delete indices %s*: HTTP %d: %s", name, res.StatusCode, body)
		}
	})
	return name
}
