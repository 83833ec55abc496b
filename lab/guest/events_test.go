//go:build linux

package guest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/bondtop/bondtop/collector"
)

// Limits of TestCountEvents*: an event's time after the carrier cut
// (the kernel's MII poll, 50 ms, plus bondtop's reaction), after the
// kernel's own notification of the new value, and against the time of
// the reading a notification made the Sampler's Run take.
const (
	eventAfterCut          = 150 * time.Millisecond
	eventAfterAnnouncement = 100 * time.Millisecond
	eventVsRunReading      = 20 * time.Millisecond
	// A change no notification announces (LACP port states) is found by
	// the re-reads every 100 ms after a notification.
	eventAfterSilentChange = 150 * time.Millisecond
)

// TestCountEventsActiveBackup: `bondtop --count 3 --json --interval 2s
// --record FILE` on an active-backup bond (miimon 50) whose active slave
// loses carrier 1 s into the second interval. The output keeps 3 lines,
// one per interval; the failover, link_down, link_failure and
// slave_state_changed events come in the second, each stamped when bondtop
// read the kernel's notification, not at the tick 1 s later. The
// recording, replayed with --replay --json, says the same.
func TestCountEventsActiveBackup(t *testing.T) {
	p := NewPair(t, 80, 2)
	p.Root.Bond(t, p.Bond, BondSpec{Mode: "active-backup", MIIMon: 50, Primary: "dut0"}, p.Slaves...)
	Eventually(t, 10*time.Second, "dut0 active", func() (bool, string) {
		a := Sysfs(t, p.Bond, "bonding/active_slave")
		return a == "dut0", a
	})
	countEvents(t, p, map[string]string{
		"failover":                 "dut0 -> dut1",
		"link_down dut0":           "up -> down",
		"link_failure dut0":        "",
		"slave_state_changed dut0": "active -> backup",
		"slave_state_changed dut1": "backup -> active",
	})
}

// TestCountEvents8023ad: the same with a slave of a negotiated 802.3ad
// bond (2 slaves, miimon 50, lacp_rate fast) losing carrier.
func TestCountEvents8023ad(t *testing.T) {
	p, _ := lacpPairSpec(t, 81, 2, BondSpec{Mode: "802.3ad", XmitHashPolicy: "layer3+4", LACPRate: "fast", MIIMon: 50})
	countEvents(t, p, map[string]string{
		"link_down dut0":    "up -> down",
		"link_failure dut0": "",
	})
}

// countEvents runs the binary and checks its events; want maps "kind
// [slave]" to "old -> new" ("" for any) for the events that must be there.
func countEvents(t *testing.T, p *Pair, want map[string]string) {
	if _, err := os.Stat(bondtopBin); err != nil {
		t.Fatalf("bondtop is not in the initramfs: %v", err)
	}
	kernel := watchLinks(t, p)
	// The reference: the collector's Run loop in this process, whose
	// notification-driven readings are snapshots of their own.
	ref := NewBondtop(t, 2*time.Second, p.Bond).Watch(t)

	rec := filepath.Join(t.TempDir(), "events.rec")
	cmd := exec.Command(bondtopBin, "--count", "3", "--json", "--interval", "2s", "--record", rec, p.Bond)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 8)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	next := func() (string, bool) {
		select {
		case l, ok := <-lines:
			return l, ok
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("bondtop printed nothing for 20 s; stderr: %s", stderr.String())
			return "", false
		}
	}

	first, ok := next()
	if !ok {
		cmd.Wait()
		t.Fatalf("bondtop printed no line; stderr: %s", stderr.String())
	}
	var s1 collector.Snapshot
	if err := json.Unmarshal([]byte(first), &s1); err != nil {
		t.Fatalf("first line: %v: %s", err, first)
	}
	// 1 s into the second interval, the active slave's cable is pulled.
	time.Sleep(time.Until(s1.Time.Add(time.Second)))
	polled := pollPortStates(p, 2*time.Second)
	cut := time.Now()
	p.Peer.Down(t, "far0")

	printed := []string{first}
	for {
		l, ok := next()
		if !ok {
			break
		}
		printed = append(printed, l)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("bondtop --count 3: %v; stderr: %s", err, stderr.String())
	}
	t.Logf("carrier cut at %s, %.0f ms after the first line's time", cut.Format(stampMs), ms(cut.Sub(s1.Time)))
	t.Logf("kernel notifications after the cut:%s", kernel.since(cut))
	t.Logf("Run's snapshots (the reference):%s", refSummary(ref, cut))

	<-polled.done
	checkCountLines(t, "--count 3 --json", printed, cut, want, kernel, ref, polled)

	// The recording: the priming sample, then what was printed.
	replayed, err := exec.Command(bondtopBin, "--replay", rec, "--json").Output()
	if err != nil {
		t.Fatalf("bondtop --replay --json: %v", err)
	}
	rlines := strings.Split(strings.TrimSpace(string(replayed)), "\n")
	if len(rlines) != len(printed)+1 || !slices.Equal(rlines[1:], printed) {
		t.Errorf("--replay --json printed %d lines; want the priming sample and the %d printed, as printed:\n%s", len(rlines), len(printed), replayed)
	} else {
		checkCountLines(t, "--replay --json", rlines[1:], cut, want, kernel, ref, polled)
	}
}

// checkCountLines checks the three lines of one run.
func checkCountLines(t *testing.T, what string, lines []string, cut time.Time, want map[string]string, kernel *linkLog, ref *Watch, polled *portPoll) {
	t.Helper()
	if len(lines) != 3 {
		t.Fatalf("%s: %d lines, want 3", what, len(lines))
	}
	snaps := make([]collector.Snapshot, 3)
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), &snaps[i]); err != nil {
			t.Fatalf("%s, line %d: %v", what, i+1, err)
		}
	}
	for i := 1; i < 3; i++ {
		span := snaps[i].Time.Sub(snaps[i-1].Time)
		if span < 1900*time.Millisecond || span > 2300*time.Millisecond || math.Abs(snaps[i].IntervalSeconds-span.Seconds()) > 0.005 {
			t.Errorf("%s, line %d: %.3f s after the previous line, interval_s %.3f: want one 2 s interval each", what, i+1, span.Seconds(), snaps[i].IntervalSeconds)
		}
	}
	if len(snaps[0].Events) > 0 {
		t.Errorf("%s: events before the cut: %s", what, FormatEvents(snaps[0].Events))
	}
	if !cut.After(snaps[0].Time) || !cut.Before(snaps[1].Time) {
		t.Fatalf("%s: the cut at %s is not in the second interval (%s..%s)", what, cut.Format(stampMs), snaps[0].Time.Format(stampMs), snaps[1].Time.Format(stampMs))
	}

	seen := map[string]bool{}
	var afterCut, afterKernel, vsRun, afterSilent []float64
	for i, s := range snaps[1:] {
		for _, e := range s.Events {
			key := string(e.Kind)
			if e.Slave != "" {
				key += " " + e.Slave
			}
			seen[key] = true
			if w, ok := want[key]; ok && w != "" && w != e.Old+" -> "+e.New {
				t.Errorf("%s: %s %s -> %s, want %s", what, key, e.Old, e.New, w)
			}
			d := e.Time.Sub(cut)
			line := fmt.Sprintf("%s: line %d, %s at +%.1f ms after the cut (the line's tick +%.1f ms)", what, i+2, e.Message, ms(d), ms(s.Time.Sub(cut)))
			announced, ok := kernel.announced(e, cut)
			if !ok {
				// No notification carries this value: bondtop finds it
				// re-reading after the notifications of the cut. When the
				// kernel changed it, the test's own polling of sysfs says.
				from, to, ok := polled.changed(e, cut)
				if !ok {
					t.Errorf("%s; the kernel announced no such value, nor did sysfs show the change after the cut", line)
					continue
				}
				line += fmt.Sprintf("; unannounced, sysfs changed it between +%.1f and +%.1f ms", ms(from.Sub(cut)), ms(to.Sub(cut)))
				afterSilent = append(afterSilent, ms(e.Time.Sub(to)))
				if e.Time.Before(from) || e.Time.Sub(to) > eventAfterSilentChange {
					t.Errorf("%s: want after the change and within %v of sysfs showing it", line, eventAfterSilentChange)
				} else {
					t.Log(line)
				}
				continue
			}
			line += fmt.Sprintf(", kernel's notification +%.1f ms", ms(announced.Sub(cut)))
			afterCut = append(afterCut, ms(d))
			afterKernel = append(afterKernel, ms(e.Time.Sub(announced)))
			if d < 0 || d > eventAfterCut {
				t.Errorf("%s: want within %v of the cut", line, eventAfterCut)
			}
			if lag := e.Time.Sub(announced); lag > eventAfterAnnouncement {
				t.Errorf("%s: want within %v of the kernel's notification", line, eventAfterAnnouncement)
			}
			r, ok := refEvent(ref, e, cut)
			if !ok {
				t.Errorf("%s: the reference Run has no such event:%s", line, FormatEvents(ref.Events()))
				continue
			}
			diff := e.Time.Sub(r.Time)
			line += fmt.Sprintf(", Run's reading +%.1f ms", ms(r.Time.Sub(cut)))
			vsRun = append(vsRun, math.Abs(ms(diff)))
			if diff.Abs() > eventVsRunReading {
				t.Errorf("%s: want within %v of Run's notification-driven reading", line, eventVsRunReading)
			} else {
				t.Log(line)
			}
		}
	}
	for key := range want {
		if !seen[key] {
			t.Errorf("%s: no %s event; lines 2 and 3:%s%s", what, key, FormatEvents(snaps[1].Events), FormatEvents(snaps[2].Events))
		}
	}
	if what == "--count 3 --json" && len(afterCut) > 0 {
		Measure(t, "count_event_time[carrier_cut->event,max]", slices.Max(afterCut), "ms")
		Measure(t, "count_event_time[kernel_notification->event,max]", slices.Max(afterKernel), "ms")
		Measure(t, "count_event_time[|event-run_reading|,max]", slices.Max(vsRun), "ms")
	}
	if what == "--count 3 --json" && len(afterSilent) > 0 {
		Measure(t, "count_event_time[sysfs_showed_change->unannounced_event,max]", slices.Max(afterSilent), "ms")
	}
}

// refEvent finds the reference Run's event matching e after the cut.
func refEvent(ref *Watch, e collector.Event, cut time.Time) (collector.Event, bool) {
	var found collector.Event
	ok := false
	deadline := time.Now().Add(2 * time.Second)
	for !ok && time.Now().Before(deadline) {
		for _, r := range ref.Events() {
			if r.Kind == e.Kind && r.Slave == e.Slave && r.Old == e.Old && r.New == e.New && r.Message == e.Message && r.Time.After(cut) {
				found, ok = r, true
				break
			}
		}
		if !ok {
			time.Sleep(10 * time.Millisecond)
		}
	}
	return found, ok
}

func refSummary(ref *Watch, cut time.Time) string {
	out := ""
	for _, s := range ref.Snapshots() {
		if s.Time.Before(cut) {
			continue
		}
		out += fmt.Sprintf("\n\t+%.1f ms: %d events", ms(s.Time.Sub(cut)), len(s.Events))
		for _, e := range s.Events {
			out += "; " + e.Message
		}
	}
	return out
}

// linkLog records the kernel's link notifications about a pair's bond and
// its slaves, each with the time it arrived here.
type linkLog struct {
	mu     sync.Mutex
	bond   string
	index  map[int]string // ifindex -> slave name
	update []linkUpdate
}

type linkUpdate struct {
	at   time.Time
	link netlink.Link
}

func watchLinks(t *testing.T, p *Pair) *linkLog {
	l := &linkLog{bond: p.Bond, index: map[int]string{}}
	for _, s := range p.Slaves {
		l.index[p.Root.Link(t, s).Attrs().Index] = s
	}
	updates, done := make(chan netlink.LinkUpdate, 256), make(chan struct{})
	if err := netlink.LinkSubscribe(updates, done); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { close(done) })
	go func() {
		for u := range updates {
			name := u.Link.Attrs().Name
			if name == p.Bond || slices.Contains(p.Slaves, name) {
				l.mu.Lock()
				l.update = append(l.update, linkUpdate{time.Now(), u.Link})
				l.mu.Unlock()
			}
		}
	}()
	return l
}

// announced returns when a notification after t0 first carried e's new
// value; false when none did (LACP details the kernel changes without a
// notification).
func (l *linkLog) announced(e collector.Event, t0 time.Time) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, u := range l.update {
		if u.at.Before(t0) {
			continue
		}
		a := u.link.Attrs()
		if e.Slave == "" {
			b, ok := u.link.(*netlink.Bond)
			if ok && a.Name == e.Bond && e.Kind == collector.EventFailover && l.index[b.ActiveSlave] == e.New {
				return u.at, true
			}
			continue
		}
		bs, ok := a.Slave.(*netlink.BondSlave)
		if !ok || a.Name != e.Slave {
			continue
		}
		var v string
		switch e.Kind {
		case collector.EventLinkDown, collector.EventLinkUp:
			v = strings.ToLower(bs.MiiStatus.String())
		case collector.EventSlaveState:
			v = strings.ToLower(bs.State.String())
		case collector.EventLinkFailure:
			v = strconv.Itoa(int(bs.LinkFailureCount))
		case collector.EventAggregator:
			v = strconv.Itoa(int(bs.AggregatorId))
		case collector.EventPortState:
			if strings.Contains(e.Message, "partner") {
				v = strconv.Itoa(int(bs.AdPartnerOperPortState))
			} else {
				v = strconv.Itoa(int(bs.AdActorOperPortState))
			}
		default:
			continue
		}
		if v == e.New {
			return u.at, true
		}
	}
	return time.Time{}, false
}

// since lists the notifications after t0, for the log.
func (l *linkLog) since(t0 time.Time) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := ""
	for _, u := range l.update {
		if u.at.Before(t0) {
			continue
		}
		a := u.link.Attrs()
		out += fmt.Sprintf("\n\t+%.1f ms %s", ms(u.at.Sub(t0)), a.Name)
		if b, ok := u.link.(*netlink.Bond); ok {
			out += " active " + l.index[b.ActiveSlave]
		}
		if bs, ok := a.Slave.(*netlink.BondSlave); ok {
			out += fmt.Sprintf(" mii %s state %s failures %d actor %d partner %d", bs.MiiStatus, bs.State, bs.LinkFailureCount, bs.AdActorOperPortState, bs.AdPartnerOperPortState)
		}
	}
	return out
}

// portPoll is the test's own reading of the slaves' LACP port states in
// sysfs every 10 ms: when the kernel changed what it does not announce.
type portPoll struct {
	done    chan struct{}
	samples []portSample // complete once done is closed
}

// portSample is one slave's states as read between before and after.
type portSample struct {
	before, after  time.Time
	slave          string
	actor, partner string
}

func pollPortStates(p *Pair, d time.Duration) *portPoll {
	pp := &portPoll{done: make(chan struct{})}
	go func() {
		defer close(pp.done)
		read := func(slave, file string) string {
			b, _ := os.ReadFile("/sys/class/net/" + slave + "/bonding_slave/" + file)
			return strings.TrimSpace(string(b))
		}
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			for _, sl := range p.Slaves {
				before := time.Now()
				a, pa := read(sl, "ad_actor_oper_port_state"), read(sl, "ad_partner_oper_port_state")
				pp.samples = append(pp.samples, portSample{before, time.Now(), sl, a, pa})
			}
		}
	}()
	return pp
}

// changed brackets when the kernel changed e's port state after t0: after
// the last read that showed another value began, before the first that
// showed the new one ended.
func (pp *portPoll) changed(e collector.Event, t0 time.Time) (after, before time.Time, ok bool) {
	if e.Kind != collector.EventPortState {
		return after, before, false
	}
	for _, s := range pp.samples {
		if s.slave != e.Slave || s.before.Before(t0) {
			continue
		}
		v := s.actor
		if strings.Contains(e.Message, "partner") {
			v = s.partner
		}
		if v == e.New {
			return after, s.after, !after.IsZero()
		}
		after = s.before
	}
	return after, before, false
}

const stampMs = "15:04:05.000"

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
