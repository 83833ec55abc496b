package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/demo"
	"github.com/bondtop/bondtop/internal/dirstate"
	"github.com/bondtop/bondtop/internal/testtree"
	"github.com/bondtop/bondtop/model"
	"github.com/bondtop/bondtop/record"
)

// The tests in this file run the real binary on input from an untrusted
// host: recordings, --root trees, names carrying terminal escapes.

// runBounded runs the binary and fails the test if it has not finished
// within limit (a hang on a FIFO, an endless read of /dev/zero).
func runBounded(t *testing.T, limit time.Duration, args ...string) (stdout, stderr string, code int, usage *syscall.Rusage) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("bondtop %s did not finish within %v (stdout %.300q, stderr %.300q)", strings.Join(args, " "), limit, o.String(), e.String())
	}
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	usage, _ = cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return o.String(), e.String(), code, usage
}

// describeDir is every entry of dir (see dirstate.Describe).
func describeDir(t *testing.T, dir string) string {
	t.Helper()
	d, err := dirstate.Describe(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestRecordRefusesTextAndSymlink: --record on a text file, on a symbolic
// link to another file and on a dangling link fails, says what it found,
// and leaves all of them (and the link's targets) as they were; a new
// recording is private.
func TestRecordRefusesTextAndSymlink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("another user's private file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("meeting notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "planted.rec")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling.rec")
	if err := os.Symlink(filepath.Join(dir, "created-by-root"), dangling); err != nil {
		t.Fatal(err)
	}
	before := describeDir(t, dir)
	for path, want := range map[string]string{
		text:     `holds a text file beginning "meeting notes", not a bondtop recording`,
		link:     "is a symbolic link",
		dangling: "is a symbolic link",
	} {
		_, stderr, code, _ := runBounded(t, 30*time.Second, "--demo", "--once", "--interval", "100ms", "--record", path)
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("--record %s: exit %d, stderr %q; want exit 1 and %q", filepath.Base(path), code, stderr, want)
		}
	}
	if after := describeDir(t, dir); after != before {
		t.Fatalf("--record changed the directory:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	fresh := filepath.Join(dir, "fresh.rec")
	if _, stderr, code, _ := runBounded(t, 30*time.Second, "--demo", "--once", "--interval", "100ms", "--record", fresh); code != 0 {
		t.Fatalf("--record to a new file: exit %d, %s", code, stderr)
	}
	if st, err := os.Stat(fresh); err != nil || st.Mode().Perm()&0o077 != 0 {
		t.Fatalf("a new recording: %v, %v (want no access for group and others)", st.Mode(), err)
	}
}

const outsideSecret = "outside-secret-9d2e"

// TestRootHostileTree runs every mode that reads a --root tree on one
// that links out of itself (a private file, /dev/zero) and holds a FIFO
// and a 3 MB proc/net/dev: each finishes in seconds, prints nothing from
// outside the tree, still shows the bond, and names the refused files.
func TestRootHostileTree(t *testing.T) {
	dir := hostTree(t)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte(outsideSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bondDir := filepath.Join(dir, "sys/class/net/bond0/bonding")
	for target, rel := range map[string]string{
		secret:      "active_slave",
		"/dev/zero": "xmit_hash_policy",
	} {
		if err := os.Symlink(target, filepath.Join(bondDir, rel)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../../../../../../../../../../../../.."+secret, filepath.Join(bondDir, "primary")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(bondDir, "mode")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(bondDir, "mode"), 0o644); err != nil {
		t.Fatal(err)
	}
	// e2 has no statistics/: its counters would come from /proc/net/dev,
	// which is too large to be read.
	if err := os.RemoveAll(filepath.Join(dir, "sys/class/net/e2/statistics")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "proc/net/dev"), bytes.Repeat([]byte("  eth9: garbage\n"), 200000), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--once"}, {"--once", "--json"}, {"list"}, {"list", "--json"}, {"--count", "2"},
	} {
		args = append([]string{"--root", dir, "--interval", "100ms"}, args...)
		stdout, stderr, code, _ := runBounded(t, 30*time.Second, args...)
		all := stdout + stderr
		if code != 0 || strings.Contains(all, outsideSecret) || !strings.Contains(stdout, "bond0") {
			t.Errorf("bondtop %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout, stderr)
			continue
		}
		if args[len(args)-1] == "list" || args[len(args)-1] == "--json" {
			continue // list prints no sysfs warnings; --json carries them in a field
		}
		for _, want := range []string{"active_slave: ", "primary: ", "xmit_hash_policy: ", "(a FIFO)", "larger than 1024 KiB"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("bondtop %s: no warning with %q:\n%s", strings.Join(args, " "), want, stdout)
			}
		}
	}
}

// escapeNames are interface names an attacker can give a bond and its
// slaves (Linux accepts them; a tree or a recording can hold anything):
// screen clearing, a title change ended by BEL, an 8-bit CSI and a
// right-to-left override, invalid UTF-8.
var escapeNames = []string{
	"bond\x1b[2J\x1b]0;pwned\x07",
	"eth\x1b[31m0",
	"eth\xc2\x9b2J\xe2\x80\xae1",
	"eth\xff\x1b2",
}

// escapeTree is an active-backup bond whose bond, slave and state names
// carry terminal escapes.
func escapeTree(t *testing.T) string {
	t.Helper()
	tree := testtree.New(t)
	dir, write := tree.Dir, tree.Write
	bond, s0, s1, s2 := escapeNames[0], escapeNames[1], escapeNames[2], escapeNames[3]
	proc := "Ethernet Channel Bonding Driver: v6.8.0-54-generic\n\n" +
		"Bonding Mode: fault-tolerance (active-backup)\n" +
		"Primary Slave: " + s0 + " (primary_reselect always)\n" +
		"Currently Active Slave: " + s0 + "\n" +
		"MII Status: up\x1b[5m\nMII Polling Interval (ms): 100\n\n"
	for i, s := range []string{s0, s1, s2} {
		proc += "Slave Interface: " + s + "\nMII Status: up\nSpeed: 1000 Mbps\nDuplex: full\x1b[8m\n" +
			"Link Failure Count: 0\nPermanent HW addr: 00:0c:29:2b:b1:5" + strconv.Itoa(i) + "\nSlave queue ID: 0\n\n"
	}
	write("proc/net/bonding/"+bond, proc)
	write("sys/class/net/bonding_masters", bond+"\n")
	write("sys/class/net/"+bond+"/bonding/mode", "active-backup\x1b[2J 1\n")
	write("sys/class/net/"+bond+"/bonding/slaves", s0+" "+s1+" "+s2+"\n")
	for _, s := range []string{bond, s0, s1, s2} {
		writeStat(t, dir, s, 1000, 1000, true)
	}
	for _, s := range []string{s0, s1, s2} {
		write("sys/class/net/"+s+"/bonding_slave/state", "backup\x1b]0;x\x07\n")
	}
	return dir
}

// checkNoEscapes fails when out holds a byte a terminal acts on: C0
// controls other than newline and tab, DEL, C1 controls as UTF-8 or as a
// bare byte, a bidi override or isolate (U+202A-U+202E, U+2066-U+2069),
// or any invalid UTF-8.
func checkNoEscapes(t *testing.T, what, out string) {
	t.Helper()
	for i := 0; i < len(out); i++ {
		c := out[i]
		bidi := c == 0xe2 && i+2 < len(out) && ((out[i+1] == 0x80 && out[i+2] >= 0xaa && out[i+2] <= 0xae) || (out[i+1] == 0x81 && out[i+2] >= 0xa6 && out[i+2] <= 0xa9))
		if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || c == 0x9b || (c == 0xc2 && i+1 < len(out) && out[i+1] >= 0x80 && out[i+1] <= 0x9f) || c == 0xff || bidi {
			t.Errorf("%s: byte %#x at %d: %q", what, c, i, out[max(0, i-30):min(len(out), i+30)])
			return
		}
	}
}

// TestEscapeNamesShownNotObeyed runs every text mode on a tree whose names
// carry terminal escapes, and a recording of it: stdout and stderr hold
// no escape byte, the names are there in visible form, and --json keeps
// them exactly.
func TestEscapeNamesShownNotObeyed(t *testing.T) {
	dir := escapeTree(t)
	rec := filepath.Join(t.TempDir(), "escapes.rec")
	out, stderr, code, _ := runBounded(t, 30*time.Second, "--root", dir, "--once", "--json", "--interval", "100ms", "--record", rec)
	if code != 0 {
		t.Fatalf("--once --json: exit %d, %s", code, stderr)
	}
	var snap model.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatal(err)
	}
	if len(snap.Bonds) != 1 || snap.Bonds[0].Name != escapeNames[0] || len(snap.Bonds[0].Slaves) != 3 || snap.Bonds[0].Slaves[0].Name != escapeNames[1] {
		t.Fatalf("--json does not carry the names as they are: %+v", snap.Bonds)
	}
	// JSON carries the names exactly, with every control (C1 and bidi
	// included, which encoding/json would write raw) as a \u escape: jq -r
	// or a log viewer prints what it is given.
	checkNoEscapes(t, "--once --json", out+stderr)
	if !strings.Contains(out, `eth\u009b2J\u202e1`) {
		t.Errorf("--json does not escape C1 and bidi:\n%s", out)
	}
	// The recording itself (read with zcat as often as replayed) and its
	// replay as JSON.
	zr, err := os.Open(rec)
	if err != nil {
		t.Fatal(err)
	}
	gz, err := gzip.NewReader(zr)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(gz)
	zr.Close()
	checkNoEscapes(t, "the recording", string(raw))
	out, stderr, code, _ = runBounded(t, 30*time.Second, "--replay", rec, "--once", "--json")
	if code != 0 || !strings.Contains(out, `eth\u009b2J\u202e1`) {
		t.Errorf("--replay --json: exit %d, %s\n%s", code, stderr, out)
	}
	checkNoEscapes(t, "--replay --json", out+stderr)

	runs := [][]string{
		{"--root", dir, "--once", "--interval", "100ms"},
		{"--root", dir, "--count", "2", "--interval", "100ms"},
		{"--root", dir, "list"},
		{"--root", dir, "--once", "--interval", "100ms", "bond9"}, // the error lists the bonds there
		{"--replay", rec, "--once"},
		{"--replay", rec, "--count", "3"},
		{"--replay", rec}, // not a terminal: the paced text
	}
	for _, args := range runs {
		out, stderr, code, _ := runBounded(t, 30*time.Second, args...)
		what := strings.Join(args[2:], " ")
		checkNoEscapes(t, what, out+stderr)
		if what == "--once --interval 100ms bond9" {
			if code != 2 || !strings.Contains(stderr, `bond\x1b[2J\x1b]0;pwned\x07`) {
				t.Errorf("%s: exit %d, %q", what, code, stderr)
			}
			continue
		}
		if code != 0 {
			t.Errorf("%s: exit %d, %s", what, code, stderr)
		}
		invalidUTF8 := `eth\xff\x1b2`
		if args[0] == "--replay" {
			invalidUTF8 = "eth\ufffd\\x1b2" // a recording is JSON: invalid UTF-8 became U+FFFD
		}
		for _, visible := range []string{`bond\x1b[2J\x1b]0;pwned\x07`, `eth\x1b[31m0`, `eth\u009b2J\u202e1`, invalidUTF8} {
			if !strings.Contains(out, visible) {
				t.Errorf("%s: %s is not shown:\n%s", what, visible, out)
			}
		}
	}

	// The watch (no --once, not a terminal) runs until interrupted.
	cmd := exec.Command(binary(t), "--root", dir, "--interval", "100ms")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	if !strings.Contains(o.String(), `eth\x1b[31m0`) {
		t.Errorf("the watch printed no table:\n%s\n%s", o.String(), e.String())
	}
	checkNoEscapes(t, "watch", o.String()+e.String())
}

// writeTimedRecording records the demo's first snapshot at the given
// times.
func writeTimedRecording(t *testing.T, times ...time.Time) string {
	t.Helper()
	clock := func() time.Time { return times[0] }
	s := collector.NewSampler(demo.New(clock), collector.Options{Clock: clock})
	snap, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "timed.rec")
	w, err := record.Create(path, record.Header{Started: times[0], Interval: 1})
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

// TestReplayImpossibleTimes: a recording whose time goes back, or jumps
// to the far future, replays up to that snapshot and then fails naming
// the line, in every mode (the paced one used to wait for the future).
func TestReplayImpossibleTimes(t *testing.T) {
	t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, c := range []struct {
		name  string
		times []time.Time
		want  string
	}{
		{"backwards", []time.Time{t0, t0.Add(time.Second), t0.Add(-time.Minute)}, "line 4: impossible timestamp: the snapshot at " + t0.Add(-time.Minute).UTC().Format("2006-01-02 15:04:05.000 MST") + " is earlier than the one before it"},
		{"future", []time.Time{t0, t0.Add(time.Second), t0.AddDate(100, 0, 0)}, "line 4: impossible timestamp: the snapshot at " + t0.AddDate(100, 0, 0).UTC().Format("2006-01-02 15:04:05.000 MST") + " is in the future"},
	} {
		path := writeTimedRecording(t, c.times...)
		for _, args := range [][]string{{"--count", "5"}, {"--count", "5", "--json"}, {}} {
			args = append([]string{"--replay", path}, args...)
			out, stderr, code, _ := runBounded(t, 30*time.Second, args...)
			if code != 1 || !strings.Contains(stderr, c.want) {
				t.Errorf("%s: bondtop %s: exit %d, stderr %q, want %q", c.name, strings.Join(args[2:], " "), code, stderr, c.want)
			}
			// The two snapshots before the bad one: bond0's table, or a JSON line.
			if n := strings.Count(out, "bond0  802.3ad") + strings.Count(out, `{"time"`); n != 2 {
				t.Errorf("%s: bondtop %s printed %d snapshots before the error:\n%s", c.name, strings.Join(args[2:], " "), n, out)
			}
		}
	}
}

// TestReplayLargeRecordingBoundedRSS replays a recording of 64 MB of JSON
// with the real binary: its peak resident memory stays under 64 MB (a
// snapshot line is 8 KB; holding the recording would take several times
// the JSON).
func TestReplayLargeRecordingBoundedRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a recording of 64 MB of JSON")
	}
	clock := time.Now().Add(-24 * time.Hour)
	s := collector.NewSampler(demo.New(func() time.Time { return clock }), collector.Options{Clock: func() time.Time { return clock }})
	snap, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	line, _ := json.Marshal(snap)
	n := (64 << 20) / len(line)
	path := filepath.Join(t.TempDir(), "large.rec")
	w, err := record.Create(path, record.Header{Started: clock, Interval: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		snap.Time = clock.Add(time.Duration(i) * time.Second)
		if err := w.Write(snap); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	for _, args := range [][]string{{"--count", strconv.Itoa(n), "--json"}, {"--count", strconv.Itoa(n)}} {
		args = append([]string{"--replay", path}, args...)
		printed, hwm := runPeakRSS(t, args...)
		t.Logf("bondtop %s: %d snapshots, %d MB of JSON in a %d KB file, printed %d MB: peak RSS %d MB",
			strings.Join(args[2:], " "), n, (n*len(line))>>20, st.Size()>>10, printed>>20, hwm>>20)
		if hwm > 64<<20 {
			t.Errorf("bondtop %s: peak RSS %d MB", strings.Join(args[2:], " "), hwm>>20)
		}
	}
}

// countingWriter counts what is written to it.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// runPeakRSS runs the binary to its end, reading its VmHWM (the peak of
// its resident memory) every 20 ms; it returns the bytes it printed and
// the last peak read.
func runPeakRSS(t *testing.T, args ...string) (printed, hwm int64) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	out := &countingWriter{}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	pid := strconv.Itoa(cmd.Process.Pid)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(5 * time.Minute)
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("bondtop %s: %v, %s", strings.Join(args, " "), err, stderr.String())
			}
			if hwm == 0 {
				t.Fatal("the process ended before its memory could be read")
			}
			return out.n, hwm << 10
		case <-tick.C:
			if _, h, err := readMemory(pid); err == nil && h > 0 {
				hwm = h
			}
		case <-deadline:
			cmd.Process.Kill()
			t.Fatalf("bondtop %s still running after 5 minutes", strings.Join(args, " "))
		}
	}
}

// TestErrorsShowEscapes: the messages that quote a value from the command
// line (a flag the program does not know, the --web.config.file name, the
// serve --listen address) or an environment show every control, never
// obey it.
func TestErrorsShowEscapes(t *testing.T) {
	esc := "a\x1b[2Jb\xc2\x9bc\xe2\x80\xaed\x7f"
	shown := `a\x1b[2Jb\u009bc\u202ed\x7f`
	for _, args := range [][]string{
		{"--" + esc},
		{"--listen", "127.0.0.1:0", "--web.config.file", esc, "--once"},
		{"serve", "--listen", esc},
		{"serve", "--" + esc},
		{"load", "--" + esc},
		{"--root", esc, "--once"},
	} {
		out, stderr, code, _ := runBounded(t, 30*time.Second, args...)
		what := strings.Join(args, " ")
		if code == 0 {
			t.Errorf("%q: exit 0", what)
		}
		checkNoEscapes(t, what, out+stderr)
		if !strings.Contains(stderr, shown) {
			t.Errorf("%q: the value is not shown: %q", what, stderr)
		}
	}
}

// TestEscapeNamesDashboardInTmux: the dashboard on the same tree, in a
// real terminal: the names' escapes change neither the pane's title nor
// its contents (the screen-clearing one would wipe the table), and the
// slaves are on the screen.
func TestEscapeNamesDashboardInTmux(t *testing.T) {
	needTmux(t)
	bin := binary(t)
	dir := escapeTree(t)
	p := newPane(t, 140, 40, fmt.Sprintf("%s --root %s --interval 200ms", bin, dir))
	p.waitText("[31m0", 15*time.Second)
	time.Sleep(time.Second) // a few frames more
	screen := p.screen()
	if title := strings.TrimSpace(p.tmux("display-message", "-p", "-t", "main", "#{pane_title}")); strings.Contains(title, "pwned") {
		t.Errorf("a name set the pane's title to %q", title)
	}
	for _, want := range []string{"eth", "2J1", "active-backup"} {
		if !strings.Contains(screen, want) {
			t.Errorf("%q is not on the screen:\n%s", want, screen)
		}
	}
	checkNoEscapes(t, "dashboard", screen)
}
