//go:build !nometrics

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// TestFleetPrometheusBasicAuth: a Prometheus behind basic auth (its own
// --web.config.file) is read with --prometheus.config.file in the
// http_config format; without it, or with a wrong password, the message
// names the URL and says Prometheus refused.
func TestFleetPrometheusBasicAuth(t *testing.T) {
	bin := binary(t)
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("prometheus is missing (scripts/test-deps.sh installs Debian's prometheus package)")
		}
		t.Skip("prometheus is missing: run scripts/test-deps.sh")
	}
	dir := t.TempDir()
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	webConfig := write("web.yml", "basic_auth_users:\n  bondtop: "+string(hash)+"\n")
	promConfig := write("prometheus.yml", "global:\n  scrape_interval: 1s\n")
	addr := unusedLoopbackAddr(t)
	log := &lockedLog{}
	p := exec.Command(prom, "--config.file="+promConfig, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--web.config.file="+webConfig, "--log.level=warn")
	p.Stdout, p.Stderr = log, log
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Process.Signal(syscall.SIGTERM); _ = p.Wait() })
	url := "http://" + addr

	good := write("good.yml", "basic_auth:\n  username: bondtop\n  password_file: "+write("pw", "s3cret\n")+"\n")
	bad := write("bad.yml", "basic_auth:\n  username: bondtop\n  password: wrong\n")
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		cmd := exec.Command(bin, append([]string{"--prometheus", url, "--once"}, args...)...)
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := run("--prometheus.config.file", good)
		if err == nil && strings.Contains(out, "holds no bondtop metrics") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("with the right password: %v\n%s\nprometheus log:\n%s", err, out, log.String())
		}
		time.Sleep(500 * time.Millisecond)
	}
	for name, args := range map[string][]string{"no config": nil, "wrong password": {"--prometheus.config.file", bad}} {
		out, err := run(args...)
		if err == nil || !strings.Contains(out, url) || !strings.Contains(out, "401") {
			t.Errorf("%s: %v, %q: want an error naming %s and 401", name, err, out, url)
		}
		if strings.Contains(out, "s3cret") || strings.Contains(out, "wrong") && !strings.Contains(out, "401") {
			t.Errorf("%s: the message shows a password: %q", name, out)
		}
	}
	if out, err := run("--prometheus.config.file", filepath.Join(dir, "missing.yml")); err == nil || !strings.Contains(out, "--prometheus.config.file") {
		t.Errorf("a missing config file: %v, %q", err, out)
	}
}
