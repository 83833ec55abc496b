package promtext

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// collectTest adds a scrape of three families.
func collectTest(s *Scrape) {
	s.Add(descUp, 1, "eth0", "bond0")
	s.Add(descUp, 0, "eth1", "bond0")
	s.Add(descOne, 1)
	s.Add(descRx, 1e12, "bond0")
}

const testText = `# HELP test_bonds Bonds.
# TYPE test_bonds gauge
test_bonds 1
# HELP test_receive_bytes_total Bytes received.
# TYPE test_receive_bytes_total counter
test_receive_bytes_total{bond="bond0"} 1e+12
# HELP test_slave_up 1 when up.
# TYPE test_slave_up gauge
test_slave_up{bond="bond0",slave="eth0"} 1
test_slave_up{bond="bond0",slave="eth1"} 0
`

// serve answers one request to Handler(collectTest).
func serve(method, target string, header http.Header) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	Handler(collectTest).ServeHTTP(rec, req)
	return rec
}

// body returns the response's text, gunzipped when it says it is gzip.
func body(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	if rec.Header().Get("Content-Encoding") != "gzip" {
		return rec.Body.String()
	}
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("broken gzip: %v", err)
	}
	return string(b)
}

// The body is gzipped when the request prefers gzip, and only then; the
// text is the same either way.
func TestHandlerGzip(t *testing.T) {
	for _, c := range []struct {
		accept string
		gzip   bool
	}{
		{"", false},
		{"gzip", true},
		{"GZIP", true},
		{"deflate, gzip, br, zstd", true}, // curl --compressed
		{"gzip;q=1.0, identity;q=0.5, *;q=0", true},
		{"identity;q=0.5, gzip", true},
		{"gzip;q=0", false},
		{"gzip; q=0.000", false},
		{"gzip;q=bad", false},
		{"*", false}, // as the Go client: identity first among equals
		{"gzip;q=0.5, identity", false},
		{"deflate, br", false},
		{"identity", false},
	} {
		h := http.Header{}
		if c.accept != "" {
			h.Set("Accept-Encoding", c.accept)
		}
		rec := serve("GET", "/metrics", h)
		if got := rec.Header().Get("Content-Encoding") == "gzip"; got != c.gzip {
			t.Errorf("Accept-Encoding %q: gzip %v, want %v", c.accept, got, c.gzip)
		}
		if rec.Code != 200 || rec.Header().Get("Content-Type") != ContentType || !strings.Contains(rec.Header().Get("Vary"), "Accept-Encoding") {
			t.Errorf("Accept-Encoding %q: %d, Content-Type %q, Vary %q", c.accept, rec.Code, rec.Header().Get("Content-Type"), rec.Header().Get("Vary"))
		}
		if got := body(t, rec); got != testText {
			t.Errorf("Accept-Encoding %q: body\n%s", c.accept, got)
		}
	}
	// Two Accept-Encoding lines count as one list.
	if rec := serve("GET", "/metrics", http.Header{"Accept-Encoding": {"identity;q=0.1", "gzip"}}); rec.Header().Get("Content-Encoding") != "gzip" {
		t.Error("gzip in a second Accept-Encoding line not seen")
	}
}

// Over a real connection: HEAD gets GET's headers and no body; a client
// that asks for gzip, as Prometheus does, gets it and reads the text.
func TestHandlerOverHTTP(t *testing.T) {
	srv := httptest.NewServer(Handler(collectTest))
	defer srv.Close()
	for _, method := range []string{"GET", "HEAD"} {
		req, _ := http.NewRequest(method, srv.URL, nil)
		req.Header.Set("Accept-Encoding", "gzip") // set by hand: the client leaves the body as sent
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != ContentType || resp.Header.Get("Content-Encoding") != "gzip" {
			t.Errorf("%s: %d %q %q", method, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Encoding"))
		}
		switch method {
		case "HEAD":
			if len(b) != 0 {
				t.Errorf("HEAD: a body of %d bytes", len(b))
			}
		case "GET":
			zr, err := gzip.NewReader(strings.NewReader(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			text, err := io.ReadAll(zr)
			if err != nil || string(text) != testText {
				t.Errorf("GET: %v\n%s", err, text)
			}
		}
	}
	// The Go client's transparent gzip: asked for and undone unseen.
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !resp.Uncompressed || string(b) != testText {
		t.Errorf("transparent gzip: uncompressed %v\n%s", resp.Uncompressed, b)
	}
}

// name[] parameters restrict the families written, as with the Go client.
func TestHandlerNameFilter(t *testing.T) {
	got := body(t, serve("GET", "/metrics?name[]=test_bonds&name[]=test_slave_up&name[]=nothing", nil))
	want := strings.Replace(testText, "# HELP test_receive_bytes_total Bytes received.\n# TYPE test_receive_bytes_total counter\ntest_receive_bytes_total{bond=\"bond0\"} 1e+12\n", "", 1)
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// The next request of the pool's Scrape has no filter left.
	if got := body(t, serve("GET", "/metrics", nil)); got != testText {
		t.Errorf("after a filtered request:\n%s", got)
	}
}

// Concurrent scrapes, each with its own Scrape and gzip writer from the
// pools, each get the whole text (go test -race checks the sharing).
func TestHandlerConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 8 {
		wg.Go(func() {
			for j := range 20 {
				h := http.Header{}
				if (i+j)%2 == 0 {
					h.Set("Accept-Encoding", "gzip")
				}
				rec := serve("GET", "/metrics", h)
				var text string
				if rec.Header().Get("Content-Encoding") == "gzip" {
					zr, err := gzip.NewReader(rec.Body)
					if err != nil {
						errs <- err
						return
					}
					b, _ := io.ReadAll(zr)
					text = string(b)
				} else {
					text = rec.Body.String()
				}
				if text != testText {
					errs <- fmt.Errorf("scrape %d/%d:\n%s", i, j, text)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A client that is gone by the time the text is written costs nothing
// but its own scrape: no panic, nothing logged.
func TestHandlerClientGone(t *testing.T) {
	for _, accept := range []string{"", "gzip"} {
		req := httptest.NewRequest("GET", "/metrics", nil)
		req.Header.Set("Accept-Encoding", accept)
		Handler(collectTest).ServeHTTP(failingWriter{http.Header{}}, req)
	}
}

type failingWriter struct{ h http.Header }

func (w failingWriter) Header() http.Header       { return w.h }
func (w failingWriter) WriteHeader(int)           {}
func (w failingWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

func BenchmarkScrape(b *testing.B) {
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	h := Handler(func(s *Scrape) {
		for i := range 200 {
			s.Add(descUp, float64(i), fmt.Sprint("eth", i), "bond0")
			s.Add(descRx, 1e12+float64(i), fmt.Sprint("bond", i))
		}
	})
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
}
