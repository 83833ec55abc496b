package neighbors

import (
	"errors"
	"os"
	"os/exec"
	"testing"
)

// TestListenWithoutCapNetRaw runs this test binary again as an
// unprivileged user (setpriv drops every capability), where the kernel
// refuses the packet socket: the error must be ErrNoPermission.
func TestListenWithoutCapNetRaw(t *testing.T) {
	if os.Getenv("BONDTOP_NOPERM_CHILD") == "1" {
		l := NewListener(nil)
		defer l.Close()
		if err := l.Watch([]string{"lo"}); !errors.Is(err, ErrNoPermission) {
			t.Fatalf("Watch without CAP_NET_RAW: %v, want ErrNoPermission", err)
		}
		return
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil || os.Geteuid() != 0 {
		why := "needs root and setpriv (util-linux) to drop to an unprivileged user"
		if os.Getenv("CI") == "true" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
		exe, "-test.run=^TestListenWithoutCapNetRaw$", "-test.v")
	cmd.Env = append(os.Environ(), "BONDTOP_NOPERM_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("unprivileged run: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
