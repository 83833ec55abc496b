//go:build linux

package guest

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// captureFixtures asks scenarios to copy their proc and sys trees into
// FixtureDir (the host passes it for make lab-fixtures).
var captureFixtures = flag.Bool("lab.fixtures", false, "copy each scenario's /proc and /sys files into "+FixtureDir)

func TestMain(m *testing.M) {
	if os.Getpid() == 1 {
		Init() // the VM's init: never returns
	}
	if !InVM() {
		fmt.Println("lab/guest: these tests run inside the lab VM only; run go test ./lab/ (or make test-lab)")
		os.Exit(0)
	}
	os.Exit(m.Run())
}
