//go:build linux

package guest

import (
	"fmt"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	if os.Getpid() == 1 {
		Init() // the VM's init: never returns
	}
	if !InVM() {
		fmt.Println("lab/guest: these tests run inside the lab VM only; run go test ./lab/ (or make test-lab)")
		os.Exit(0)
	}
	switch os.Getenv(helperEnv) {
	case "unprivileged-read":
		os.Exit(unprivilegedRead())
	case "flowmeter-true", "flowmeter-false":
		os.Exit(flowmeterHelper(os.Getenv(helperEnv) == "flowmeter-true"))
	}
	os.Exit(m.Run())
}
