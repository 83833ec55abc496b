package contrib

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// The demo's imbalance as Prometheus sees it at 1 s scrapes: a recording
// of the real binary's /metrics (bondtop --demo --headless), one scrape a
// second, of the series the imbalance rule reads. The rules test replays
// it at 1 s and, taking every Nth scrape at each phase, at 15, 30 and 60 s
// (TestImbalanceAtEveryScrapeInterval).
const demoRecording = "prometheus/testdata/demo-imbalance-1s.txt"

// recordedPrefix selects the series the recording keeps.
const recordedPrefix = `bondtop_finding{`

// TestRecordDemo writes demoRecording anew: BONDTOP_RECORD_DEMO=17m go
// test -run TestRecordDemo ./contrib/ (it runs that long, in real time).
// Each line is a series and, per second, 1 where the scrape had it and
// _ where it had not.
func TestRecordDemo(t *testing.T) {
	span := os.Getenv("BONDTOP_RECORD_DEMO")
	if span == "" {
		t.Skip("BONDTOP_RECORD_DEMO=DURATION records the demo")
	}
	d, err := time.ParseDuration(span)
	if err != nil {
		t.Fatal(err)
	}
	e := startExporter(t, "--demo")
	n := int(d / time.Second)
	present := map[string][]byte{}
	start := time.Now().Truncate(time.Second).Add(time.Second)
	late := 0
	for i := range n {
		at := start.Add(time.Duration(i) * time.Second)
		time.Sleep(time.Until(at))
		if time.Since(at) > 500*time.Millisecond {
			late++
		}
		s, err := scrapeOnce(e.addr)
		if err != nil {
			t.Fatalf("scrape %d: %v", i, err)
		}
		for k, v := range s {
			if !strings.HasPrefix(k, recordedPrefix) || v != 1 {
				continue
			}
			if present[k] == nil {
				present[k] = []byte(strings.Repeat("_", n))
			}
			present[k][i] = '1'
		}
	}
	if late > n/20 {
		t.Fatalf("%d of %d scrapes began more than 0.5 s late: the machine is too busy for a 1 s recording", late, n)
	}
	keys := make([]string, 0, len(present))
	for k := range present {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	f, err := os.Create(demoRecording)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "# bondtop --demo --headless scraped every second for %v (%d scrapes, %d late); 1: present, _: absent\n", d, n, late)
	for _, k := range keys {
		fmt.Fprintf(w, "%s\t%s\n", k, present[k])
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
