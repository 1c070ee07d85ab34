// The console end-to-end tests' browser: Chromium driven by chromedp,
// and what the page's list is compared with.

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/etld/etld/internal/testenv"
)

func screenshotDir(t *testing.T) string {
	if d := os.Getenv("ETLD_TEST_SCREENSHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// statusJSON is the part of /pipelines that the list shows.
type statusJSON struct {
	Name      string  `json:"name"`
	State     string  `json:"state"`
	StartedAt *string `json:"started_at"`
	Restarts  int     `json:"restarts"`
	Errors    int     `json:"errors"`
	Sources   []struct {
		In           int64  `json:"rows_in"`
		Skipped      int64  `json:"skipped"`
		DeadLettered int64  `json:"dead_lettered"`
		Lag          *int64 `json:"lag"`
	} `json:"sources"`
	Sinks []struct {
		Out          int64 `json:"rows_out"`
		Skipped      int64 `json:"skipped"`
		DeadLettered int64 `json:"dead_lettered"`
	} `json:"sinks"`
	Checkpoints struct {
		LastID   int64   `json:"last_id"`
		Size     int64   `json:"last_size_bytes"`
		Duration float64 `json:"last_duration_seconds"`
		LastAt   *string `json:"last_at"`
	} `json:"checkpoints"`
}

// expected is what the list must show for st, by data-field.
func (st statusJSON) expected() map[string]string {
	var in, out, skipped, dlq, lag int64
	lags := 0
	for _, s := range st.Sources {
		in += s.In
		skipped += s.Skipped - s.DeadLettered
		dlq += s.DeadLettered
		if s.Lag != nil {
			lag += *s.Lag
			lags++
		}
	}
	for _, s := range st.Sinks {
		out += s.Out
		skipped += s.Skipped - s.DeadLettered
		dlq += s.DeadLettered
	}
	m := map[string]string{
		"state": st.State, "rows_in": fmt.Sprint(in), "rows_out": fmt.Sprint(out),
		"restarts": fmt.Sprint(st.Restarts), "errors": fmt.Sprint(st.Errors),
		"skipped": fmt.Sprint(skipped), "dead_lettered": fmt.Sprint(dlq), "lag": "–",
		"uptime@": "",
	}
	if lags > 0 {
		m["lag"] = fmt.Sprint(lag)
	}
	if st.StartedAt != nil {
		m["uptime@"] = *st.StartedAt
	}
	if cp := st.Checkpoints; cp.LastID != 0 {
		m["checkpoint_id"] = "#" + fmt.Sprint(cp.LastID)
		m["checkpoint_size@"] = fmt.Sprint(cp.Size)
		m["checkpoint_size"] = fmt.Sprint(cp.Size) + " B"
		m["checkpoint_duration@"] = strconv.FormatFloat(cp.Duration, 'g', -1, 64)
		if cp.LastAt != nil {
			m["checkpoint_age@"] = *cp.LastAt
		}
	}
	return m
}

// readList is the page's list: per pipeline, each data-field's text (and
// its data-value under "field@").
const readList = `(() => {
  const out = {};
  for (const tr of document.querySelectorAll("#pipelines tbody tr")) {
    const m = {};
    for (const e of tr.querySelectorAll("[data-field]")) {
      const f = e.getAttribute("data-field");
      if (f === "checkpoint" || f === "rates" || f === "name" || f === "error") continue;
      m[f] = e.textContent;
      if (e.hasAttribute("data-value")) m[f + "@"] = e.getAttribute("data-value");
    }
    out[tr.getAttribute("data-pipeline")] = m;
  }
  return out;
})()`

func newBrowser(t *testing.T) (context.Context, context.CancelFunc) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(testenv.Chromium(t)),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.WindowSize(1600, 1200),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 5*time.Minute)
	return ctx, func() { cancelTimeout(); cancelCtx(); cancelAlloc() }
}

func browse(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// eval runs a script in the page and decodes its value.
func eval[T any](ctx context.Context, script string) (T, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[T](script))
}

func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", path)
}

// eventually polls cond in the browser until it holds.
func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	testenv.Eventually(t, 60*time.Second, what, cond)
}

// signIn loads the console at base+"/ui" (no token yet: the sign-in form
// answers 401), enters the token and waits for the list.
func signIn(t *testing.T, ctx context.Context, base, shots, shot string) {
	t.Helper()
	browse(t, ctx, "load /ui", chromedp.Navigate(base+"/ui"), chromedp.WaitVisible(chromedp.CSS(`input[name=token]`)))
	why, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#why")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(why, "admin.token") {
		t.Errorf("sign-in page says %q", why)
	}
	if shot != "" {
		screenshot(t, ctx, shots, shot)
	}
	browse(t, ctx, "sign in",
		chromedp.SendKeys(chromedp.CSS(`input[name=token]`), consoleToken),
		chromedp.Submit(chromedp.CSS(`input[name=token]`)),
		chromedp.WaitVisible(chromedp.CSS(`#pipelines tbody tr`)))
}
