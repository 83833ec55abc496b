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
	for _, bad := range [][]string{
		{"--interval", "10ms"},
		{"--count", "-1"},
		{"--once", "--count", "3"},
		{"--json"},
		{"../etc"},
		{"--nope"},
	} {
		if _, err := parseArgs(bad, io.Discard); err == nil {
			t.Errorf("parseArgs(%q) accepted", bad)
		}
	}
}
