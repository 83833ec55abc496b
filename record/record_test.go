package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/demo"
	"github.com/bondtop/bondtop/model"
)

// demoSnapshots samples the demo host once a second for n seconds.
func demoSnapshots(t *testing.T, n int) []*model.Snapshot {
	t.Helper()
	return demoSnapshotsTB(t, n)
}

func demoSnapshotsTB(t testing.TB, n int) []*model.Snapshot {
	t.Helper()
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s := collector.NewSampler(demo.New(clock), collector.Options{Clock: clock})
	var out []*model.Snapshot
	for range n {
		snap, err := s.Sample()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, snap)
		now = now.Add(time.Second)
	}
	return out
}

func writeRecording(t *testing.T, path string, snaps []*model.Snapshot) {
	t.Helper()
	w, err := Create(path, Header{Started: snaps[0].Time, Host: "test", Interval: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range snaps {
		if err := w.Write(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRoundTrip: replayed snapshots are the recorded JSON, byte for byte,
// and decode to snapshots that encode to the same bytes again (LACP ports
// included, whose JSON is hand-written).
func TestRoundTrip(t *testing.T) {
	snaps := demoSnapshots(t, 95) // through the demo's link loss, failover and LACP flap
	path := filepath.Join(t.TempDir(), "rec.bondtop")
	writeRecording(t, path, snaps)
	rec, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Headers) != 1 || rec.Headers[0].Format != FormatVersion || len(rec.Entries) != len(snaps) {
		t.Fatalf("headers %v, %d entries", rec.Headers, len(rec.Entries))
	}
	for i, e := range rec.Entries {
		want, _ := json.Marshal(snaps[i])
		if !bytes.Equal(e.Raw, want) {
			t.Fatalf("entry %d raw differs:\n%s\n%s", i, e.Raw, want)
		}
		again, _ := json.Marshal(e.Snapshot)
		if !bytes.Equal(again, want) {
			t.Fatalf("entry %d does not survive decoding:\n%s\n%s", i, again, want)
		}
	}
}

func TestAppendSessions(t *testing.T) {
	snaps := demoSnapshots(t, 6)
	path := filepath.Join(t.TempDir(), "rec.bondtop")
	writeRecording(t, path, snaps[:3])
	writeRecording(t, path, snaps[3:])
	rec, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Headers) != 2 || len(rec.Entries) != 6 {
		t.Fatalf("%d headers, %d entries", len(rec.Headers), len(rec.Entries))
	}
}

// TestTruncatedKeepsWhatWasWritten cuts a recording at every length: the
// reader never panics, returns a prefix of the snapshots, and says the file
// is cut short.
func TestTruncatedKeepsWhatWasWritten(t *testing.T) {
	snaps := demoSnapshots(t, 5)
	path := filepath.Join(t.TempDir(), "rec.bondtop")
	writeRecording(t, path, snaps)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	most := 0
	for cut := 0; cut < len(data); cut += 7 {
		rec, err := ReadFrom(bytes.NewReader(data[:cut]), "cut")
		if err == nil {
			t.Fatalf("cut at %d of %d: no error", cut, len(data))
		}
		if rec == nil || len(rec.Entries) > len(snaps) {
			t.Fatalf("cut at %d: %v", cut, rec)
		}
		for i, e := range rec.Entries {
			if e.Snapshot.Time != snaps[i].Time {
				t.Fatalf("cut at %d: entry %d is not snapshot %d", cut, i, i)
			}
		}
		if len(rec.Entries) > 0 && !errors.Is(err, ErrTruncated) {
			t.Fatalf("cut at %d: %v, want ErrTruncated", cut, err)
		}
		most = max(most, len(rec.Entries))
	}
	if most < len(snaps)-1 {
		t.Fatalf("a file cut near its end gave only %d of %d snapshots", most, len(snaps))
	}
}

func TestNotARecording(t *testing.T) {
	for _, in := range []string{"", "hello", "\x1f\x8b\x08\x00garbage"} {
		if _, err := ReadFrom(bytes.NewReader([]byte(in)), "x"); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func FuzzReadFrom(f *testing.F) {
	var buf bytes.Buffer
	path := filepath.Join(f.TempDir(), "seed")
	w, err := Create(path, Header{Interval: 1})
	if err != nil {
		f.Fatal(err)
	}
	_ = w.Write(&model.Snapshot{Events: []model.Event{}})
	_ = w.Close()
	seed, _ := os.ReadFile(path)
	buf.Write(seed)
	f.Add(buf.Bytes())
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, _ := ReadFrom(bytes.NewReader(data), "fuzz")
		if rec == nil {
			t.Fatal("nil recording")
		}
		// Reading times only (the replay dashboard's index) finds the
		// same snapshots, and maybe more: a line with a good time and a
		// bad body fails only when it is decoded.
		r, err := NewReader(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		r.TimesOnly = true
		n := 0
		for {
			e, err := r.Next()
			if err != nil {
				break
			}
			if n == len(rec.Entries) {
				break
			}
			if !e.Time.Equal(rec.Entries[n].Time) {
				t.Fatalf("times-only entry %d (%v) is not the decoded one", n, e.Time)
			}
			n++
		}
	})
}
