package webguard

import (
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// TestReloadNeverLowersProtection rewrites the web config in place, over
// and over (empty, cut short, whole), while requests without credentials
// keep coming: none may get through. A complete file with a new password
// takes effect; a complete file without users is refused and logged, and
// the password in force keeps working.
func TestReloadNeverLowersProtection(t *testing.T) {
	p := newPKI(t)
	path := p.write(t, "web.yml", p.tlsUsers())
	s := serve(t, Options{ConfigFile: path})
	url := "https://" + s.addr + "/metrics"
	waitFor(t, 20*time.Second, "the server answers", func() bool {
		code, _, err := get(p.client, url, user, password)
		return err == nil && code == 200
	})

	whole := []byte(p.tlsUsers())
	stop := make(chan struct{})
	var rewrites, requests, leaked, failed atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			// In place, as an editor or a config tool that truncates
			// and writes does: readers see empty and partial files.
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				t.Error(err)
				return
			}
			cut := i % (len(whole) + 1)
			f.Write(whole[:cut])
			f.Close()
			rewrites.Add(1)
		}
	}()
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				code, body, err := get(p.client, url, "", "")
				requests.Add(1)
				switch {
				case err != nil:
					failed.Add(1)
				case code == 200 || contains(body, "metrics"):
					leaked.Add(1)
				}
			}
		}()
	}
	time.Sleep(3 * time.Second)
	close(stop)
	wg.Wait()
	t.Logf("%d in-place rewrites, %d requests without credentials: %d served, %d failed", rewrites.Load(), requests.Load(), leaked.Load(), failed.Load())
	if leaked.Load() > 0 {
		t.Fatalf("%d requests without credentials were served", leaked.Load())
	}
	if requests.Load() < 100 || rewrites.Load() < 100 {
		t.Fatalf("too few rewrites (%d) or requests (%d) to prove anything", rewrites.Load(), requests.Load())
	}

	// A new password, complete: taken.
	h, err := bcrypt.GenerateFromPassword([]byte("new one"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	p.write(t, "web.yml", fmt.Sprintf("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n  %s: %s\n", user, h))
	waitFor(t, 5*time.Second, "the new password is taken", func() bool {
		code, _, err := get(p.client, url, user, "new one")
		return err == nil && code == 200
	})
	// No users: refused, logged; the new password stays in force.
	p.write(t, "web.yml", "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n")
	waitFor(t, 5*time.Second, "the refusal is logged", func() bool {
		return contains(s.log.String(), "refused: it drops basic auth")
	})
	if code, _, err := get(p.client, url, "", ""); err != nil || code != http.StatusUnauthorized {
		t.Errorf("without users in the file: %d %v, want 401", code, err)
	}
	if code, _, err := get(p.client, url, user, "new one"); err != nil || code != 200 {
		t.Errorf("the password in force: %d %v", code, err)
	}
	// No TLS either: refused.
	p.write(t, "web.yml", fmt.Sprintf("basic_auth_users:\n  %s: %s\n", user, h))
	waitFor(t, 5*time.Second, "the refusal of plain HTTP is logged", func() bool {
		return contains(s.log.String(), "refused: it drops TLS")
	})
	if code, _, err := get(p.client, url, user, "new one"); err != nil || code != 200 {
		t.Errorf("TLS in force: %d %v", code, err)
	}
}

// TestFIFOSwappedIn: a FIFO renamed over the web config (nobody writes
// into it) wedges nothing: requests and handshakes go on with the last
// good config, the log says why, and a regular file put back is taken.
func TestFIFOSwappedIn(t *testing.T) {
	p := newPKI(t)
	path := p.write(t, "web.yml", p.tlsUsers())
	s := serve(t, Options{ConfigFile: path})
	url := "https://" + s.addr + "/metrics"
	waitFor(t, 20*time.Second, "the server answers", func() bool {
		code, _, err := get(p.client, url, user, password)
		return err == nil && code == 200
	})
	fifo := path + ".fifo"
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(fifo, path); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := 0; i < 20; i++ {
		p.client.CloseIdleConnections() // a new handshake each time
		code, _, err := get(p.client, url, user, password)
		if err != nil || code != 200 {
			t.Fatalf("request %d with a FIFO in place: %d %v", i, code, err)
		}
		if code, _, err := get(p.client, url, "", ""); err != nil || code != http.StatusUnauthorized {
			t.Fatalf("request %d without credentials: %d %v", i, code, err)
		}
	}
	t.Logf("40 requests, 20 handshakes with a FIFO in place: %v", time.Since(start))
	if !contains(s.log.String(), "a FIFO, not a regular file") {
		t.Errorf("the log does not say why: %q", s.log.String())
	}
	// Back to a regular file, without users' protection lowered.
	os.Remove(path)
	p.write(t, "web.yml", p.tlsUsers()+"http_server_config:\n  headers:\n    X-Frame-Options: deny\n")
	waitFor(t, 5*time.Second, "the regular file is taken", func() bool {
		req, _ := http.NewRequest("GET", url, nil)
		req.SetBasicAuth(user, password)
		resp, err := p.client.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.Header.Get("X-Frame-Options") == "deny"
	})
}
