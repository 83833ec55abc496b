package drill

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestState(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if s, err := ReadState(dir, "bond0"); s != nil || err != nil {
		t.Fatalf("no file: %v %v", s, err)
	}
	want := &State{Bond: "bond0", Slave: "eth0", How: Down, SlaveWasUp: true, ActiveBefore: "eth0", PID: 42, Started: time.Unix(100, 0).UTC()}
	if err := writeState(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadState(dir, "bond0")
	if err != nil || *got != *want {
		t.Fatalf("read back %+v, %v", got, err)
	}
	if s, err := ReadState(dir, "bond1"); s != nil || err != nil {
		t.Errorf("another bond's state: %v %v", s, err)
	}
	os.WriteFile(filepath.Join(dir, "drill-bond1.json"), []byte("{"), 0o644)
	if _, err := ReadState(dir, "bond1"); err == nil || !strings.Contains(err.Error(), "check") {
		t.Errorf("corrupt state: %v", err)
	}
	if err := removeState(dir, "bond0"); err != nil {
		t.Fatal(err)
	}
	if s, _ := ReadState(dir, "bond0"); s != nil {
		t.Errorf("state left after remove")
	}
	for _, bad := range []string{"../etc", "", "a/b", "averyveryverylongname"} {
		if _, err := StatePath(dir, bad); err == nil {
			t.Errorf("bond name %q accepted", bad)
		}
	}
}
