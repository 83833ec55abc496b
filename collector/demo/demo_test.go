package demo

import (
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/internal/collectortest"
	"github.com/bondtop/bondtop/model"
)

// TestDemoTrafficAndEvents fast-forwards the demo: within 40 s of simulated
// time every slave carries traffic and something happens; over a whole
// script cycle there is a failover and an LACP partner loss.
func TestDemoTrafficAndEvents(t *testing.T) {
	clk := collectortest.NewClock(time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC))
	s := collector.NewSampler(New(clk.Now), collector.Options{Interval: time.Second, Clock: clk.Now})
	moved := map[string]bool{}
	kinds := map[model.EventKind]int{}
	firstEvent := time.Duration(-1)
	for sec := 0; sec <= 2*int(demoScriptPeriod/time.Second); sec++ {
		snap := collectortest.MustSample(t, s)
		for _, b := range snap.Bonds {
			for _, sl := range b.Slaves {
				if sl.TxBps != nil && *sl.TxBps < 0 || sl.RxBps != nil && *sl.RxBps < 0 {
					t.Fatalf("negative rate on %s at %ds", sl.Name, sec)
				}
				// bond0's slaves must all carry hashed flows; bond1's
				// standby only hears multicast, as a real one does.
				if sl.TxBps != nil && *sl.TxBps > 1e6 || b.Name == "bond1" && sl.RxBps != nil && *sl.RxBps > 0 {
					moved[b.Name+"/"+sl.Name] = true
				}
				if sl.TxBps != nil && sl.SpeedMbps != nil && *sl.TxBps > float64(*sl.SpeedMbps)*1e6 {
					t.Fatalf("%s sends %.0f bit/s over its %d Mbit/s", sl.Name, *sl.TxBps, *sl.SpeedMbps)
				}
			}
		}
		for _, e := range snap.Events {
			kinds[e.Kind]++
			if firstEvent < 0 {
				firstEvent = time.Duration(sec) * time.Second
			}
		}
		if sec == 40 {
			if firstEvent < 0 {
				t.Fatal("no event within 40 s")
			}
			for _, name := range []string{"bond0/ens1f0", "bond0/ens1f1", "bond0/ens2f0", "bond0/ens2f1", "bond1/eno1", "bond1/eno2"} {
				if !moved[name] {
					t.Errorf("%s carried no traffic within 40 s", name)
				}
			}
		}
		clk.Advance(time.Second)
	}
	for _, k := range []model.EventKind{model.EventLinkDown, model.EventLinkUp, model.EventFailover, model.EventChurn, model.EventAggregator, model.EventPartnerMAC, model.EventPortState, model.EventLinkFailure} {
		if kinds[k] == 0 {
			t.Errorf("no %s event in two script cycles (%v)", k, kinds)
		}
	}
	t.Logf("first event after %v; events: %v", firstEvent, kinds)
}

// TestDemoLayer2Imbalance checks the point of the demo's first bond: with
// layer2 and one gateway, one slave carries most of the transmit traffic.
func TestDemoLayer2Imbalance(t *testing.T) {
	clk := collectortest.NewClock(time.Unix(0, 0))
	s := collector.NewSampler(New(clk.Now), collector.Options{Interval: time.Second, Clock: clk.Now})
	collectortest.MustSample(t, s)
	clk.Advance(time.Second)
	b := collectortest.MustSample(t, s).Bond("bond0")
	top := 0.0
	for _, sl := range b.Slaves {
		if sl.ShareTx != nil && *sl.ShareTx > top {
			top = *sl.ShareTx
		}
	}
	if top < 0.5 {
		t.Fatalf("largest tx share %.2f: the layer2 demo should be unbalanced", top)
	}
}
