//go:build linux

package guest

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
)

// TestKernelSetup: the guest runs the kernel the host booted, with the
// modules init loaded, tells TCX kernels from clsact-only ones as the
// kernel itself does, and the judges (tc, bpftool) run with the libraries
// the host packed for them.
func TestKernelSetup(t *testing.T) {
	k := Kernel(t)
	t.Logf("kernel %s (%d.%d), TCX %v", k, k.Major, k.Minor, k.TCX())
	osrelease, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(osrelease)); got != k.Release {
		t.Errorf("Kernel says %q, /proc/sys/kernel/osrelease %q", k.Release, got)
	}

	t.Run("modules", func(t *testing.T) {
		for _, m := range []string{"tls", "bonding", "veth", "sch_ingress", "cls_bpf", "llc", "stp", "bridge", "inet_diag", "tcp_diag", "udp_diag"} {
			if _, err := os.Stat("/sys/module/" + m); err != nil {
				t.Errorf("module %s not loaded: %v", m, err)
			}
		}
	})

	t.Run("tcx", func(t *testing.T) {
		// The kernel has TCX when its attach code is there.
		has := kallsyms(t, "tcx_prog_attach")
		if k.TCX() != has {
			t.Errorf("Kernel(%s).TCX() = %v, but tcx_prog_attach in /proc/kallsyms: %v", k, k.TCX(), has)
		}
	})

	t.Run("tc", func(t *testing.T) {
		root := Root(t)
		root.Veth(t, "kv0", NewNS(t, "kpeer"), "kv1")
		link := root.Link(t, "kv0")
		clsact := &netlink.GenericQdisc{
			QdiscAttrs: netlink.QdiscAttrs{
				LinkIndex: link.Attrs().Index,
				Handle:    netlink.MakeHandle(0xffff, 0),
				Parent:    netlink.HANDLE_CLSACT,
			},
			QdiscType: "clsact",
		}
		if err := root.NL.QdiscAdd(clsact); err != nil {
			t.Fatalf("clsact on kv0: %v", err)
		}
		var qdiscs []struct{ Kind string }
		out := Judge(t, "tc", "-j", "qdisc", "show", "dev", "kv0")
		if err := json.Unmarshal([]byte(out), &qdiscs); err != nil {
			t.Fatalf("tc -j qdisc show: %v: %s", err, out)
		}
		found := false
		for _, q := range qdiscs {
			found = found || q.Kind == "clsact"
		}
		if !found {
			t.Errorf("tc shows no clsact qdisc on kv0: %s", out)
		}
	})

	t.Run("bpftool", func(t *testing.T) {
		var progs []map[string]any
		out := Judge(t, "bpftool", "-j", "prog", "show")
		if err := json.Unmarshal([]byte(out), &progs); err != nil {
			t.Fatalf("bpftool -j prog show: %v: %s", err, out)
		}
		t.Logf("bpftool lists %d BPF programs", len(progs))
	})
}

// kallsyms reports whether the kernel has a symbol of that name.
func kallsyms(t *testing.T, name string) bool {
	t.Helper()
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "ffffffff81234560 T tcx_prog_attach"
		if f := strings.Fields(sc.Text()); len(f) >= 3 && f[2] == name {
			return true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return false
}
