package ui

import (
	"context"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/bondtop/bondtop/drill"
	"github.com/bondtop/bondtop/loadrun"
)

// scriptedDriller stands in for the live host in the panel's own test:
// the drill itself is tested on the real bonding driver (lab).
type scriptedDriller struct {
	loadrun.Live
	asked chan drill.Options
	plan  *scriptedDrill
}

func (s scriptedDriller) PrepareDrill(_ context.Context, o drill.Options) (loadrun.PreparedDrill, error) {
	s.asked <- o
	return s.plan, nil
}

type scriptedDrill struct{ runs chan struct{} }

func (s *scriptedDrill) Describe() string {
	return "failover drill on bond0 (active-backup), slave eth0, --how down\n  1. set eth0 administratively down (as a pulled cable); eth1 carry the traffic\n"
}

func (s *scriptedDrill) Run(ctx context.Context, progress func(string)) (*drill.Result, error) {
	s.runs <- struct{}{}
	progress("failover: eth0 down, hold 5s")
	<-ctx.Done() // stopped with x
	return &drill.Result{Bond: "bond0", Mode: "active-backup", Slave: "eth0", How: drill.Down, Restored: true,
		Interrupted: "interrupted: the drill stopped early"}, ctx.Err()
}

// Ctrl-F in the load panel plans a drill of the selected bond against the
// form's server and shows the plan, naming the slave; n cancels without
// running it, y runs it, x stops it and the panel says the bond was put
// back.
func TestDrillPanel(t *testing.T) {
	dr := scriptedDriller{asked: make(chan drill.Options, 4), plan: &scriptedDrill{runs: make(chan struct{}, 4)}}
	l := startLoop(t, failoverHost(t), Options{Bond: "bond0", Load: dr})
	l.keys("l")
	l.waitFor(5*time.Second, "New load test over bond0", "Ctrl-F failover drill of bond0")
	l.keys("10.0.0.9", tcell.KeyCtrlF)
	l.waitFor(5*time.Second, "Failover drill of bond0", "slave eth0, --how down", "set eth0 administratively down", "y run the drill")
	if o := <-dr.asked; o.Bond != "bond0" || o.Peer != "10.0.0.9:5201" {
		t.Errorf("drill asked for %+v, want bond0 against 10.0.0.9:5201", o)
	}
	l.keys("n")
	l.waitFor(5*time.Second, "New load test over bond0")
	select {
	case <-dr.plan.runs:
		t.Fatal("n ran the drill")
	default:
	}

	l.keys(tcell.KeyCtrlF)
	l.waitFor(5*time.Second, "y run the drill")
	l.keys("y")
	<-dr.plan.runs
	l.waitFor(5*time.Second, "failover: eth0 down, hold 5s", "x stop")
	l.keys("x")
	l.waitFor(5*time.Second, "interrupted", "restored: the slave's admin state and the active slave are as before")
}

// Where no live bond can be drilled (the demo), the panel says so.
func TestDrillPanelUnavailable(t *testing.T) {
	h, src := demoHost(t, 5)
	s := demoSim(t, h, 100, 30, false)
	s.d.loadp.runner = loadrun.Demo{Source: src}
	s.press("l")
	s.key(tcell.KeyCtrlF, 0)
	mustContain(t, s.text(), "the failover drill acts on a live bond")
}
