package intent

import "testing"

func TestFileOrder(t *testing.T) {
	files := []File{{Path: "/lib/netplan/10-a.yaml"}, {Path: "/etc/netplan/10-a.yaml"}, {Path: "/run/netplan/10-a.yaml"}, {Path: "/etc/netplan/05-b.yaml"}, {Path: "/lib/netplan/20-c.yaml"}}
	got := netplanOrder(files)
	want := []string{"/etc/netplan/05-b.yaml", "/run/netplan/10-a.yaml", "/lib/netplan/20-c.yaml"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i].Path != want[i] {
			t.Errorf("netplan order %d: %s, want %s", i, got[i].Path, want[i])
		}
	}
	nd := networkdOrder([]File{{Path: "/run/systemd/network/a.network"}, {Path: "/etc/systemd/network/a.network"}, {Path: "/usr/lib/systemd/network/a.network"}})
	if len(nd) != 1 || nd[0].Path != "/etc/systemd/network/a.network" {
		t.Errorf("networkd: %v", nd)
	}
}
