package ui

import (
	"fmt"
	"testing"
)

// The golden screens: what an admin sees in each situation, at the two
// sizes people run terminals at. -update rewrites them; review the diff.

func TestGoldenLACPHealthy(t *testing.T) {
	h := lacpHost(t, "synthetic-8023ad-6.8-4slaves-root.txt", []string{"e1", "e2", "e3", "e4"})
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		newSim(t, h, size[0], size[1], false).golden(fmt.Sprintf("8023ad-healthy-%dx%d", size[0], size[1]))
	}
}

func TestGoldenLACPUnpartnered(t *testing.T) {
	h := lacpHost(t, "8023ad-4slaves-e4-unpartnered.txt", []string{"e1", "e2", "e3"})
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		newSim(t, h, size[0], size[1], false).golden(fmt.Sprintf("8023ad-unpartnered-%dx%d", size[0], size[1]))
	}
}

func TestGoldenActiveBackupFailover(t *testing.T) {
	h := failoverHost(t)
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		newSim(t, h, size[0], size[1], false).golden(fmt.Sprintf("activebackup-failover-%dx%d", size[0], size[1]))
	}
}

func TestGoldenTiny(t *testing.T) {
	h := lacpHost(t, "8023ad-4slaves-e4-unpartnered.txt", []string{"e1", "e2", "e3"})
	newSim(t, h, 40, 12, false).golden("8023ad-unpartnered-40x12")
}

func TestGoldenHelp(t *testing.T) {
	h := failoverHost(t)
	s := newSim(t, h, 80, 24, false)
	s.press("?")
	s.golden("help-80x24")
}
