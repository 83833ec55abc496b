package main

import (
	"io"
	"reflect"
	"testing"
	"time"
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
	if o, _ := parseArgs(nil, io.Discard); o.top != 50 || o.flowMapSize != 65536 {
		t.Fatalf("defaults: top %d, map %d", o.top, o.flowMapSize)
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
	} {
		if _, err := parseArgs(bad, io.Discard); err == nil {
			t.Errorf("parseArgs(%q) accepted", bad)
		}
	}
}
