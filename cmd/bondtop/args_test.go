package main

import (
	"errors"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/bondtop/bondtop/collector/flowmeter"
)

func TestParseArgs(t *testing.T) {
	o, err := parseArgs([]string{"bond0", "--once", "bond1", "--interval", "200ms", "--json"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o.bonds, []string{"bond0", "bond1"}) || !o.once || !o.json || o.interval != 200*time.Millisecond {
		t.Fatalf("%+v", o)
	}
	o, err = parseArgs([]string{"list", "--root", "/x"}, io.Discard)
	if err != nil || o.command != "list" || o.root != "/x" || len(o.bonds) != 0 {
		t.Fatalf("%+v %v", o, err)
	}
	o, err = parseArgs([]string{"--top", "7", "--flow-map-size", "2048", "--no-ebpf"}, io.Discard)
	if err != nil || o.top != 7 || o.flowMapSize != 2048 || !o.noEBPF {
		t.Fatalf("%+v %v", o, err)
	}
	if o, _ := parseArgs(nil, io.Discard); o.top != 50 || o.flowMapSize != 65536 || o.meterBudget != flowmeter.DefaultBudget {
		t.Fatalf("defaults: top %d, map %d, budget %d", o.top, o.flowMapSize, o.meterBudget)
	}
	// The budget reaches the meter; 0 is no budget.
	defer func(open func(flowmeter.Options) (flowmeter.Meter, error)) { openMeter = open }(openMeter)
	for _, tc := range []struct {
		arg        string
		wantBudget int
	}{{"1000", 1000}, {"0", -1}} {
		o, err := parseArgs([]string{"--meter-budget", tc.arg}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		var got flowmeter.Options
		openMeter = func(opts flowmeter.Options) (flowmeter.Meter, error) {
			got = opts
			return nil, errors.New("not in this test")
		}
		startMeter(&o)
		if got.Budget != tc.wantBudget {
			t.Errorf("--meter-budget %s: the meter got %d, want %d", tc.arg, got.Budget, tc.wantBudget)
		}
	}
	for _, bad := range [][]string{
		{"--interval", "10ms"},
		{"--count", "-1"},
		{"--once", "--count", "3"},
		{"--json"},
		{"../etc"},
		{"--nope"},
		{"--top", "-1"},
		{"--flow-map-size", "10"},
		{"--flow-map-size", "99999999"},
		{"--meter-budget", "-5"},
	} {
		if _, err := parseArgs(bad, io.Discard); err == nil {
			t.Errorf("parseArgs(%q) accepted", bad)
		}
	}
}
