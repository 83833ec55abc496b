package record

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// timedRecording writes a recording whose snapshots are the demo's first
// one at the given times.
func timedRecording(t *testing.T, times ...time.Time) string {
	t.Helper()
	snap := demoSnapshots(t, 1)[0]
	path := filepath.Join(t.TempDir(), "timed.rec")
	w, err := Create(path, Header{Started: times[0], Interval: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range times {
		snap.Time = at
		if err := w.Write(snap); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func readAll(t *testing.T, path string, now time.Time) (n int, err error) {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.Now = func() time.Time { return now }
	for {
		if _, err = r.Next(); err != nil {
			if err == io.EOF {
				err = nil
			}
			return r.Read(), err
		}
	}
}

// TestImpossibleTimes: a snapshot that goes back in time, lies in the far
// future or has no time ends the reading with an error naming its line
// (the header is line 1); the snapshots before it were read.
func TestImpossibleTimes(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	now := t0.Add(time.Hour)
	for _, c := range []struct {
		name  string
		times []time.Time
		want  string
		read  int
	}{
		{"backwards", []time.Time{t0, t0.Add(time.Second), t0.Add(500 * time.Millisecond)}, "line 4: impossible timestamp: the snapshot at 2026-12-02 09:00:00.500 UTC is earlier than the one before it", 2},
		{"far future", []time.Time{t0, t0.Add(time.Second), t0.AddDate(30, 0, 0)}, "line 4: impossible timestamp: the snapshot at 2056-12-02 09:00:00.000 UTC is in the future", 2},
		{"no time", []time.Time{t0, {}}, "line 3: impossible timestamp: the snapshot has no time", 1},
		{"fine", []time.Time{t0, t0.Add(time.Second), t0.Add(time.Second), now.Add(time.Hour)}, "", 4},
	} {
		n, err := readAll(t, timedRecording(t, c.times...), now)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrBadTime)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		case n != c.read:
			t.Errorf("%s: %d snapshots read, want %d", c.name, n, c.read)
		}
	}
}

// bigRecording writes a recording of n snapshots (the demo's first one,
// one second apart) and returns its path and uncompressed size.
func bigRecording(tb testing.TB, n int) (string, int64) {
	tb.Helper()
	clock := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	snaps := demoSnapshotsTB(tb, 2)
	line, err := json.Marshal(snaps[1])
	if err != nil {
		tb.Fatal(err)
	}
	stamp := []byte(fmt.Sprintf(`{"time":%q`, snaps[1].Time.Format(time.RFC3339Nano)))
	if !bytes.HasPrefix(line, stamp) {
		tb.Fatalf("a snapshot line starts %.40s", line)
	}
	path := filepath.Join(tb.TempDir(), "big.rec")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	gz := gzip.NewWriter(f)
	var size int64
	hdr := fmt.Sprintf(`{"bondtop_recording":1,"started":%q,"interval_s":1}`+"\n", clock.Format(time.RFC3339))
	m, _ := io.WriteString(gz, hdr)
	size += int64(m)
	for i := range n {
		at := fmt.Sprintf(`{"time":%q`, clock.Add(time.Duration(i)*time.Second).Format(time.RFC3339Nano))
		io.WriteString(gz, at)
		gz.Write(line[len(stamp):])
		gz.Write([]byte{'\n'})
		size += int64(len(at) + len(line) - len(stamp) + 1)
	}
	if err := gz.Close(); err != nil {
		tb.Fatal(err)
	}
	return path, size
}

// liveHeap is the heap still referenced after a collection.
func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// peakHeapReading reads the recording at path with a Reader and returns
// the largest live heap seen, less the heap before it began.
func peakHeapReading(tb testing.TB, path string, timesOnly bool) (peak uint64, n int) {
	base := liveHeap()
	r, err := Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	r.TimesOnly = timesOnly
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		if (e.Snapshot == nil) != timesOnly {
			tb.Fatal("TimesOnly not honoured")
		}
		n++
		if n%250 == 0 {
			peak = max(peak, liveHeap()-min(base, liveHeap()))
		}
	}
	return peak, n
}

// TestReaderMemoryBounded reads a recording of 16 MB of JSON: the live
// heap while reading stays under 4 MiB (a snapshot line is 8 KB), where
// reading it whole would hold every line and every decoded snapshot.
func TestReaderMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 16 MB of JSON")
	}
	path, raw := bigRecording(t, 2000)
	st, _ := os.Stat(path)
	for _, timesOnly := range []bool{false, true} {
		peak, n := peakHeapReading(t, path, timesOnly)
		t.Logf("timesOnly %v: %d snapshots, %d MB of JSON in a %d KB file: peak live heap %d KB", timesOnly, n, raw>>20, st.Size()>>10, peak>>10)
		if n != 2000 {
			t.Fatalf("read %d snapshots", n)
		}
		if peak > 4<<20 {
			t.Errorf("timesOnly %v: the live heap grew by %d MB while reading", timesOnly, peak>>20)
		}
	}
}

// BenchmarkReadRecording reads a 2000-snapshot recording (16 MB of JSON)
// by streaming it and, for comparison, whole into memory; peak-live-B is
// the most heap held at once.
func BenchmarkReadRecording(b *testing.B) {
	path, _ := bigRecording(b, 2000)
	b.Run("stream", func(b *testing.B) {
		var peak uint64
		for b.Loop() {
			p, _ := peakHeapReading(b, path, false)
			peak = max(peak, p)
		}
		b.ReportMetric(float64(peak), "peak-live-B")
	})
	b.Run("whole", func(b *testing.B) {
		var peak uint64
		for b.Loop() {
			base := liveHeap()
			rec, err := Read(path)
			if err != nil {
				b.Fatal(err)
			}
			peak = max(peak, liveHeap()-min(base, liveHeap()))
			runtime.KeepAlive(rec)
		}
		b.ReportMetric(float64(peak), "peak-live-B")
	})
}

// TestSkip: after skipping n snapshots (in two sessions), Next returns
// snapshot n with its line.
func TestSkip(t *testing.T) {
	snaps := demoSnapshots(t, 6)
	path := filepath.Join(t.TempDir(), "two-sessions.rec")
	writeRecording(t, path, snaps[:3])
	writeRecording(t, path, snaps[3:])
	for n := range 6 {
		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Skip(n); err != nil {
			t.Fatal(err)
		}
		e, err := r.Next()
		r.Close()
		// Lines: header, 3 snapshots, header, 3 snapshots.
		wantLine := n + 2
		if n >= 3 {
			wantLine++
		}
		if err != nil || !e.Time.Equal(snaps[n].Time) || e.Line != wantLine || e.Snapshot == nil {
			t.Fatalf("skip %d: %v, time %v line %d, want %v line %d", n, err, e.Time, e.Line, snaps[n].Time, wantLine)
		}
	}
}
