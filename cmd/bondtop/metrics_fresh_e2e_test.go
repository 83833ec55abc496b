//go:build !nometrics

package main

import (
	"fmt"
	"math"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestScrapeReadsCounters runs the real binary on a tree whose counters a
// goroutine advances at a known rate, with a sampling interval (10 s) far
// longer than the scrape interval (1 s): each scrape's counters must be
// read when it asks, so one second of scrapes holds one second of bytes,
// never two samples' worth and never none; and many scrapers at once
// share one read.
func TestScrapeReadsCounters(t *testing.T) {
	dir := hostTree(t)
	addr := unusedLoopbackAddr(t)
	const rate = 1e9 // bytes per second on e1
	start := time.Now()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			tx := uint64(rate * time.Since(start).Seconds())
			writeStat(t, dir, "e1", 0, tx, true)
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()

	cmd := exec.Command(binary(t), "--root", dir, "--listen", addr, "--headless", "--interval", "10s")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	client := &http.Client{Timeout: 5 * time.Second}
	scrape := func() (map[string]*dto.MetricFamily, error) {
		resp, err := client.Get("http://" + addr + "/metrics")
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		parser := expfmt.NewTextParser(model.UTF8Validation)
		return parser.TextToMetricFamilies(resp.Body)
	}
	tx := func(fams map[string]*dto.MetricFamily) float64 {
		for _, m := range fams["bondtop_slave_transmit_bytes_total"].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "slave" && l.GetValue() == "e1" {
					return m.GetCounter().GetValue()
				}
			}
		}
		return math.NaN()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if fams, err := scrape(); err == nil && !math.IsNaN(tx(fams)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no metrics within 10 s; stderr: %s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Scrapes one second apart, as Prometheus makes them.
	var ratios []string
	prev, prevAt := math.NaN(), time.Time{}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for i := 0; i < 8; i++ {
		<-tick.C
		at := time.Now()
		fams, err := scrape()
		if err != nil {
			t.Fatal(err)
		}
		v := tx(fams)
		if !math.IsNaN(prev) {
			// The bytes between two scrapes, in seconds of traffic, over
			// the seconds between them.
			ratio := (v - prev) / rate / at.Sub(prevAt).Seconds()
			ratios = append(ratios, fmt.Sprintf("%.2f", ratio))
			if ratio < 0.5 || ratio > 1.5 {
				t.Errorf("scrape %d: %.2f s of traffic in %.2f s between scrapes", i, (v-prev)/rate, at.Sub(prevAt).Seconds())
			}
		}
		prev, prevAt = v, at
	}
	t.Logf("1 s scrapes of a tree sampled every 10 s: traffic per scrape interval, in intervals: %s", strings.Join(ratios, " "))

	// 12 scrapers at once (within the 16 connections a client address may hold) share the reads: at most a few distinct sample
	// times among them.
	time.Sleep(time.Second)
	var mu sync.Mutex
	times := map[float64]int{}
	var swg sync.WaitGroup
	for i := 0; i < 12; i++ {
		swg.Add(1)
		go func() {
			defer swg.Done()
			fams, err := scrape()
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			times[fams["bondtop_last_sample_timestamp_seconds"].GetMetric()[0].GetGauge().GetValue()]++
			mu.Unlock()
		}()
	}
	swg.Wait()
	t.Logf("12 concurrent scrapes saw %d distinct reads", len(times))
	if len(times) > 3 {
		t.Errorf("12 concurrent scrapes made %d reads: %v", len(times), times)
	}
}
