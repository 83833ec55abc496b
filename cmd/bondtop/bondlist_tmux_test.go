package main

import (
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/internal/bondtree"
)

// TestBondListInTmux: the real binary on a host of 64 bonds opens the
// bond list; / finds bond47, Enter shows it, b brings the list back with
// the cursor on it, and the header counts the bonds.
func TestBondListInTmux(t *testing.T) {
	needTmux(t)
	bin := binary(t)
	tr, err := bondtree.Write(t.TempDir(), 64, 2)
	if err != nil {
		t.Fatal(err)
	}
	p := newPane(t, 120, 40, bin+" --root "+tr.Dir)
	screen := p.waitText("64 bonds: choose one", 15*time.Second)
	if i2, i10 := strings.Index(screen, " bond2 "), strings.Index(screen, " bond10 "); i2 < 0 || i10 < 0 || i2 > i10 {
		t.Fatalf("bond2 should be listed before bond10:\n%s", screen)
	}
	p.keys("/", "4", "7")
	p.waitText("filter: 47", 5*time.Second)
	p.keys("Enter")
	p.waitText("bond47 47/64", 5*time.Second)
	p.keys("b")
	p.waitText("64 bonds: choose one", 5*time.Second)
	// PgDn twice from bond47 reaches the end of the list, on screen.
	p.keys("PgDn", "PgDn", "Enter")
	p.waitText("bond64 64/64", 5*time.Second)
	p.keys("q")
}
