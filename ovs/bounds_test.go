package ovs

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tests in this file hold every read of an OVS file or socket to a
// bound in size and time: what a run directory or a daemon can send is
// an error (a warning on the dashboard), never memory or a hang.

// finishes fails the test when f has not returned within limit: a read
// that blocks on a FIFO or never ends on the zero device.
func finishes(t *testing.T, limit time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("still reading after %v", limit)
	}
}

func TestPidfileBounded(t *testing.T) {
	for _, c := range []struct {
		name, want string
		make       func(path string) error
	}{
		{"zero device", "a character device", func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"FIFO", "a FIFO", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
		{"directory", "a directory", func(p string) error { return os.Mkdir(p, 0o700) }},
		{"1 MB of digits", "over 32 bytes", func(p string) error { return os.WriteFile(p, []byte(strings.Repeat("7", 1<<20)), 0o600) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			c0 := NewClient(t.TempDir())
			if err := c.make(filepath.Join(c0.RunDir, "ovs-vswitchd.pid")); err != nil {
				t.Fatal(err)
			}
			var err error
			finishes(t, 10*time.Second, func() { _, err = c0.ControlSocket() })
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error saying %q", err, c.want)
			}
			// A whole read: the bonds carry OVSDB's part, the pidfile is
			// the warning.
			dbServe(t, c0.RunDir, portReply(2, "bond0"))
			var h *Host
			finishes(t, 10*time.Second, func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				h, err = c0.Read(ctx)
			})
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if h.VswitchdErr == nil || !strings.Contains(h.VswitchdErr.Error(), c.want) {
				t.Fatalf("vswitchd: %v", h.VswitchdErr)
			}
		})
	}
	// A good pidfile still reads.
	c := NewClient(t.TempDir())
	os.WriteFile(filepath.Join(c.RunDir, "ovs-vswitchd.pid"), []byte("4242\n"), 0o644)
	if p, err := c.ControlSocket(); err != nil || filepath.Base(p) != "ovs-vswitchd.4242.ctl" {
		t.Fatalf("%s, %v", p, err)
	}
}

// streamServe answers every request on a unix socket at path with what
// write sends: the server streams, so the test's own memory stays small
// and the client's is what is measured.
func streamServe(t *testing.T, path string, write func(w *bufio.Writer, id string, method string, params json.RawMessage)) {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				dec := json.NewDecoder(c)
				for {
					var req struct {
						Method string          `json:"method"`
						Params json.RawMessage `json:"params"`
						ID     json.RawMessage `json:"id"`
					}
					if dec.Decode(&req) != nil {
						return
					}
					w := bufio.NewWriterSize(c, 64<<10)
					write(w, string(req.ID), req.Method, req.Params)
					if w.Flush() != nil {
						return
					}
				}
			}()
		}
	}()
}

// portReply is a Bridge/Port transaction answer with one port of n
// interface UUIDs, and an Interface answer for each asked.
func portReply(n int, name string) func(w *bufio.Writer, id, method string, params json.RawMessage) {
	return func(w *bufio.Writer, id, _ string, params json.RawMessage) {
		var ops []json.RawMessage
		json.Unmarshal(params, &ops)
		if len(ops) == 3 && strings.Contains(string(ops[2]), `"Port"`) {
			fmt.Fprintf(w, `{"id":%s,"error":null,"result":[{"rows":[{"_uuid":["uuid","00000000-0000-0000-0000-00000000000b"],"name":"br0","ports":["uuid","00000000-0000-0000-0000-00000000000a"],"datapath_type":""}]},{"rows":[{"_uuid":["uuid","00000000-0000-0000-0000-00000000000a"],"name":%q,"bond_mode":"balance-slb","lacp":["set",[]],"bond_updelay":0,"bond_downdelay":0,"bond_active_slave":["set",[]],"other_config":["map",[]],"interfaces":["set",[`, id, name)
			// No allocation per UUID: the test measures the client's.
			buf, num := make([]byte, 0, 64), make([]byte, 0, 16)
			for i := range n {
				buf = append(buf[:0], `,["uuid","`...)
				if i == 0 {
					buf = buf[1:]
				}
				num = strconv.AppendUint(num[:0], uint64(i)+1<<32, 16)
				buf = append(buf, num[1:]...) // 8 digits
				buf = append(buf, `-0000-0000-0000-000000000000"]`...)
				w.Write(buf)
			}
			w.WriteString(`]]}]}]}`)
			return
		}
		fmt.Fprintf(w, `{"id":%s,"error":null,"result":[`, id)
		for i := range len(ops) - 1 {
			if i > 0 {
				w.WriteByte(',')
			}
			fmt.Fprintf(w, `{"rows":[{"_uuid":["uuid","%08x-0000-0000-0000-000000000000"],"name":"eth%d","type":"","link_state":"up","admin_state":"up","lacp_current":["set",[]],"statistics":["map",[]],"ofport":%d,"ifindex":%d,"link_speed":["set",[]],"mac_in_use":"52:54:00:00:00:%02x"}]}`, i, i, i+1, i+2, i%256)
		}
		w.WriteString(`]}`)
	}
}

func dbServe(t *testing.T, dir string, write func(w *bufio.Writer, id, method string, params json.RawMessage)) {
	streamServe(t, filepath.Join(dir, "db.sock"), write)
}

// bigText streams a reply whose result is a string of size bytes.
func bigText(size int) func(w *bufio.Writer, id, method string, params json.RawMessage) {
	chunk := strings.Repeat("x", 64<<10)
	return func(w *bufio.Writer, id, _ string, _ json.RawMessage) {
		fmt.Fprintf(w, `{"id":%s,"error":null,"result":"`, id)
		for n := 0; n < size; n += len(chunk) {
			if _, err := w.WriteString(chunk); err != nil {
				return
			}
		}
		w.WriteString(`"}`)
	}
}

// allocated runs f and returns the bytes the heap handed out meanwhile.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func readWithin(t *testing.T, c *Client) (h *Host, err error) {
	t.Helper()
	finishes(t, 30*time.Second, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h, err = c.Read(ctx)
	})
	return h, err
}

// TestRepliesBounded: a 64 MiB OVSDB reply, a port naming 1.2 million
// interfaces, a port naming 5 000 (small enough in bytes), and a 64 MiB
// bond/show are each an error saying what was over which bound; what one
// read allocates stays a small multiple of the bound, whatever the reply.
func TestRepliesBounded(t *testing.T) {
	for _, c := range []struct {
		name  string
		db    func(w *bufio.Writer, id, method string, params json.RawMessage)
		want  string
		bound int
	}{
		{"64 MiB OVSDB reply", bigText(64 << 20), "over the 8388608-byte limit", maxMessage},
		{"a port with 1.2 M interfaces", portReply(1_200_000, "bond0"), "over the 8388608-byte limit", maxMessage},
		{"a port with 5000 interfaces", portReply(5000, "bond0"), "5000 interfaces, over the 1024", maxMessage},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := NewClient(t.TempDir())
			defer cl.Close()
			dbServe(t, cl.RunDir, c.db)
			var err error
			n := allocated(func() { _, err = readWithin(t, cl) })
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error saying %q", err, c.want)
			}
			t.Logf("%s: %v; %.1f MiB allocated", c.name, err, float64(n)/(1<<20))
			if n > uint64(6*c.bound) {
				t.Errorf("one read allocated %.1f MiB, over 6 times the %d MiB bound", float64(n)/(1<<20), c.bound>>20)
			}
		})
	}
	t.Run("64 MiB bond/show", func(t *testing.T) {
		cl := NewClient(t.TempDir())
		defer cl.Close()
		dbServe(t, cl.RunDir, portReply(2, "bond0"))
		os.WriteFile(filepath.Join(cl.RunDir, "ovs-vswitchd.pid"), []byte("4242\n"), 0o644)
		streamServe(t, filepath.Join(cl.RunDir, "ovs-vswitchd.4242.ctl"), bigText(64<<20))
		var h *Host
		var err error
		n := allocated(func() { h, err = readWithin(t, cl) })
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if h.VswitchdErr == nil || !strings.Contains(h.VswitchdErr.Error(), "over the 1048576-byte limit") {
			t.Fatalf("vswitchd: %v", h.VswitchdErr)
		}
		if len(h.Bonds) != 1 || len(h.Bonds[0].Members) != 2 {
			t.Errorf("OVSDB's part was lost: %+v", h.Bonds)
		}
		t.Logf("64 MiB bond/show: %v; %.1f MiB allocated", h.VswitchdErr, float64(n)/(1<<20))
		if n > uint64(6*maxMessage) {
			t.Errorf("one read allocated %.1f MiB", float64(n)/(1<<20))
		}
	})
}

// A server that answers nothing costs the read its deadline, no more.
func TestSilentServerDeadline(t *testing.T) {
	cl := NewClient(t.TempDir())
	defer cl.Close()
	dbServe(t, cl.RunDir, func(w *bufio.Writer, _, _ string, _ json.RawMessage) { time.Sleep(time.Hour) })
	var err error
	finishes(t, 20*time.Second, func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err = cl.Read(ctx)
	})
	if err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("silent server: %v", err)
	}
}
