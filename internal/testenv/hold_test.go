package testenv_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/etld/etld/internal/testenv"
)

// A held request reaches the server only at Release, after the client
// that sent it has gone and another client's request went through; the
// held connection's server side then ends.
func TestHoldProxyHoldsUntilRelease(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.URL.Path+"="+string(body))
		mu.Unlock()
		// Chunked, as Elasticsearch answers.
		w.(http.Flusher).Flush()
		fmt.Fprint(w, strings.Repeat("x", 5000))
	}))
	defer srv.Close()
	p := testenv.NewHoldProxy(t, srv.Listener.Addr().String(), testenv.HTTPFraming)
	seen := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
	post := func(ctx context.Context, client *http.Client, path, body string) error {
		req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+p.Addr()+path, strings.NewReader(body))
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		_, err = io.ReadAll(res.Body)
		return err
	}
	old := &http.Client{Transport: &http.Transport{}}
	if err := post(context.Background(), old, "/a", "1"); err != nil {
		t.Fatal(err)
	}
	held := p.Hold(func(req []byte) bool { return strings.HasPrefix(string(req), "POST /b ") })
	ctx, kill := context.WithCancel(context.Background())
	failed := make(chan error, 1)
	go func() { failed <- post(ctx, old, "/b", "stale") }() // the same connection as /a
	<-held
	kill() // the client goes, its request held
	if err := <-failed; err == nil {
		t.Fatal("the held request was answered")
	}
	through := p.Seen(func(req []byte) bool { return strings.HasPrefix(string(req), "POST /b ") })
	fresh := &http.Client{Transport: &http.Transport{}}
	if err := post(context.Background(), fresh, "/b", "new"); err != nil {
		t.Fatal(err)
	}
	<-through
	if g := seen(); strings.Join(g, " ") != "/a=1 /b=new" {
		t.Fatalf("before the release the server got %v", g)
	}
	select {
	case <-p.Release():
	case <-time.After(30 * time.Second):
		t.Fatal("the released request was not answered")
	}
	if g := seen(); strings.Join(g, " ") != "/a=1 /b=new /b=stale" {
		t.Fatalf("after the release the server got %v", g)
	}
	if a := p.Answers(); len(a) != 1 || !strings.HasPrefix(string(a[0]), "HTTP/1.1 200") || !strings.HasSuffix(string(a[0]), "0\r\n\r\n") {
		t.Fatalf("answers to the released request: %q", a)
	}
}

func TestFramings(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func([]byte) (int, int32)
		in   string
		n    int
		id   int32
	}{
		{"http length", testenv.HTTPFraming.Request, "POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET", 41, 0},
		{"http short", testenv.HTTPFraming.Request, "POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nab", 0, 0},
		{"http no body", testenv.HTTPFraming.Request, "GET / HTTP/1.1\r\nHost: x\r\n\r\nGET", 27, 0},
		{"http chunked", testenv.HTTPFraming.Response, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nHTTP", 60, 0},
		{"http chunked short", testenv.HTTPFraming.Response, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n", 0, 0},
		{"mysql", testenv.MySQLFraming.Request, "\x02\x00\x00\x00\x03xmore", 6, 0},
		{"mysql short", testenv.MySQLFraming.Request, "\x05\x00\x00\x00\x03x", 0, 0},
		{"kafka request", testenv.KafkaFraming.Request, "\x00\x00\x00\x0a\x00\x00\x00\x09\x00\x00\x00\x07abX", 14, 7},
		{"kafka answer", testenv.KafkaFraming.Response, "\x00\x00\x00\x04\x00\x00\x01\x00", 8, 256},
	} {
		if n, id := tc.f([]byte(tc.in)); n != tc.n || id != tc.id {
			t.Errorf("%s: got %d, %d; want %d, %d", tc.name, n, id, tc.n, tc.id)
		}
	}
}
