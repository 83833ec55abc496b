package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkReadRealPrometheus refreshes the list of a fleet of generated
// bonds (BONDTOP_FLEET_BENCH_BONDS, default 10 000: 2 500 hosts × 4 bonds
// × 2 slaves) from Debian's Prometheus, which scrapes them from one
// generated exposition (honor_labels keeps each host's instance). ns/op
// is one refresh as bondtop waits for it; cpu-ms/op is bondtop's own CPU
// (user + system) per refresh; the rest is Prometheus. The list's read
// by default; BONDTOP_FLEET_BENCH_DETAIL=links for the dashboard's list
// (each slave's link and role too), =1 for the JSON's (everything).
func BenchmarkReadRealPrometheus(b *testing.B) {
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		b.Skip("prometheus is missing: run scripts/test-deps.sh")
	}
	bonds := 10000
	if s := os.Getenv("BONDTOP_FLEET_BENCH_BONDS"); s != "" {
		if bonds, err = strconv.Atoi(s); err != nil || bonds < 4 {
			b.Fatalf("BONDTOP_FLEET_BENCH_BONDS=%q: give a number of bonds, 4 or more", s)
		}
	}
	hosts := bonds / 4
	var page strings.Builder
	for h := range hosts {
		for bi := range 4 {
			l := fmt.Sprintf(`instance="host%d:9843",job="bondtop",bond="bond%d"`, h, bi)
			fmt.Fprintf(&page, "bondtop_bond_info{%s,mode=\"802.3ad\",xmit_hash_policy=\"layer3+4\",lacp_rate=\"fast\",ad_select=\"stable\"} 1\n", l)
			fmt.Fprintf(&page, "bondtop_bond_up{%s} 1\nbondtop_bond_slaves{%s} 2\nbondtop_bond_slaves_up{%s} %d\n", l, l, l, 2-(h+bi)%97/96)
			if (h+bi)%50 == 0 {
				fmt.Fprintf(&page, "bondtop_finding{%s,id=\"lacp-no-partner\",severity=\"warning\",slave=\"eth1\"} 1\n", l)
			}
			fmt.Fprintf(&page, "bondtop_bond_transmit_bytes_total{%s} %d\nbondtop_bond_receive_bytes_total{%s} %d\n", l, h*bi, l, h)
			for si := range 2 {
				sl := fmt.Sprintf(`%s,slave="eth%d"`, l, si)
				fmt.Fprintf(&page, "bondtop_slave_up{%s} 1\nbondtop_slave_active{%s} 1\nbondtop_slave_speed_bytes{%s} 1.25e+09\n", sl, sl, sl)
				fmt.Fprintf(&page, "bondtop_slave_transmit_bytes_total{%s} %d\nbondtop_slave_receive_bytes_total{%s} %d\n", sl, h, sl, bi)
			}
		}
		fmt.Fprintf(&page, "bondtop_build_info{instance=\"host%d:9843\",job=\"bondtop\",version=\"bench\"} 1\n", h)
	}
	// A static page: its counters stand still, so their rates are 0,
	// and serving it costs (almost) no CPU of this process, which
	// cpu-ms/op counts.
	body := []byte(page.String())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write(body)
	}))
	defer srv.Close()

	dir := b.TempDir()
	addr := freeAddr(b)
	cfg := fmt.Sprintf("global:\n  scrape_interval: 5s\n  scrape_timeout: 5s\nscrape_configs:\n  - job_name: gen\n    honor_labels: true\n    static_configs:\n      - targets: [%q]\n", strings.TrimPrefix(srv.URL, "http://"))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		b.Fatal(err)
	}
	p := exec.Command(prom, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	if err := p.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = p.Process.Signal(syscall.SIGTERM); _ = p.Wait() }()

	detail := DetailList
	switch os.Getenv("BONDTOP_FLEET_BENCH_DETAIL") {
	case "":
	case "links":
		detail = DetailLinks // the dashboard's list
	default:
		detail = DetailFull
	}
	c, err := New(Config{URL: "http://" + addr, Timeout: time.Minute, Detail: detail})
	if err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		f, err := c.Read(context.Background())
		if err == nil && len(f.Bonds) == bonds && f.Bonds[len(f.Bonds)-1].TxBps != nil {
			break
		}
		if time.Now().After(deadline) {
			n := 0
			if f != nil {
				n = len(f.Bonds)
			}
			b.Fatalf("after 3 min: %d of %d bonds, %v", n, bonds, err)
		}
		time.Sleep(2 * time.Second)
	}
	var before, after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	b.ResetTimer()
	queries := 0
	for b.Loop() {
		f, err := c.Read(context.Background())
		if err != nil || len(f.Bonds) != bonds {
			b.Fatalf("%v, %d bonds", err, len(f.Bonds))
		}
		queries += f.Queries
	}
	b.StopTimer()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(queries)/float64(b.N), "queries/op")
	// Prometheus' own time for the queries of one refresh, by its
	// query statistics: what the refresh costs the server, apart from
	// sending and decoding the answers. Every target is up here: no
	// LastKnownFor query.
	var promTime time.Duration
	for _, q := range c.Queries().All() {
		var r struct {
			Data struct {
				Stats struct {
					Timings struct {
						ExecTotalTime float64 `json:"execTotalTime"`
					} `json:"timings"`
				} `json:"stats"`
			} `json:"data"`
		}
		resp, err := http.Get("http://" + addr + "/api/v1/query?stats=all&query=" + url.QueryEscape(q))
		if err != nil {
			b.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		if err != nil {
			b.Fatal(err)
		}
		promTime += time.Duration(r.Data.Stats.Timings.ExecTotalTime * float64(time.Second))
	}
	b.ReportMetric(float64(promTime.Milliseconds()), "prom-ms/op")
}

func freeAddr(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
