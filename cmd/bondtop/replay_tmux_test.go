package main

import (
	"fmt"
	"regexp"
	"testing"
	"time"
)

// TestReplayDashboardInTmux plays a two-minute recording on the real
// dashboard, which reads the file as it plays: it pauses, jumps forward
// and back (past both ends), and resumes.
func TestReplayDashboardInTmux(t *testing.T) {
	needTmux(t)
	bin := binary(t)
	path := recordedDemo(t, 120) // one snapshot a second, 09:00:00 to 09:01:59 UTC
	p := newPane(t, 120, 40, fmt.Sprintf("TZ=UTC %s --replay %s bond0", bin, path))
	clock := regexp.MustCompile(`every 1s  (09:0\d:\d\d)`)
	shown := func() time.Time {
		t.Helper()
		m := clock.FindStringSubmatch(p.screen())
		if m == nil {
			t.Fatalf("no time in the header:\n%s", p.screen())
		}
		at, err := time.Parse("15:04:05", m[1])
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	waitClock := func(at time.Time) {
		t.Helper()
		p.waitText("every 1s  "+at.Format("15:04:05"), 10*time.Second)
	}
	p.waitText("09:00:02", 15*time.Second)
	p.keys("p")
	time.Sleep(300 * time.Millisecond)
	paused := shown()
	time.Sleep(1500 * time.Millisecond)
	if now := shown(); !now.Equal(paused) {
		t.Fatalf("paused at %s, then showed %s", paused.Format("15:04:05"), now.Format("15:04:05"))
	}
	p.keys(">")
	waitClock(paused.Add(10 * time.Second))
	p.keys("<", "<", "<")
	start, _ := time.Parse("15:04:05", "09:00:00")
	waitClock(start)
	for range 13 {
		p.keys(">")
	}
	waitClock(start.Add(119 * time.Second))
	p.keys("<")
	waitClock(start.Add(109 * time.Second))
	p.keys("p") // resume
	waitClock(start.Add(111 * time.Second))
}
