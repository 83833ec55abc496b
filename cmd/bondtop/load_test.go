package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/bondtop/bondtop/load"
)

// startLoadServer runs bondtop's iperf3 server in-process on a free
// loopback port.
func startLoadServer(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		(&load.Server{}).Serve(ctx, ln)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return ln.Addr().(*net.TCPAddr).Port
}

func loadJSONKeys(m map[string]any) []string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	slices.Sort(k)
	return k
}

// `bondtop load --json` prints exactly the documented keys.
func TestLoadJSON(t *testing.T) {
	port := startLoadServer(t)
	var out, errb bytes.Buffer
	code := run([]string{"load", fmt.Sprintf("127.0.0.1:%d", port), "-P", "2", "-t", "1", "--json"}, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var doc map[string]any
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if got := strings.Join(loadJSONKeys(doc), ","); got != "slaves,streams,sum" {
		t.Errorf("top-level keys %s", got)
	}
	streams := doc["streams"].([]any)
	if len(streams) != 2 {
		t.Fatalf("%d streams", len(streams))
	}
	for _, s := range streams {
		if got := strings.Join(loadJSONKeys(s.(map[string]any)), ","); got != "bits_per_second,bytes,id,predicted_slave,retransmits,sport" {
			t.Errorf("stream keys %s", got)
		}
	}
	sum := doc["sum"].(map[string]any)
	if got := strings.Join(loadJSONKeys(sum), ","); got != "bits_per_second,bytes,retransmits" {
		t.Errorf("sum keys %s", got)
	}
	if sum["bytes"].(float64) <= 0 {
		t.Errorf("sum: %v", sum)
	}
	if s, ok := doc["slaves"].([]any); !ok || len(s) != 0 {
		t.Errorf("slaves %v: want [] without a bond", doc["slaves"])
	}
}

func TestLoadText(t *testing.T) {
	port := startLoadServer(t)
	var out, errb bytes.Buffer
	if code := run([]string{"load", fmt.Sprintf("127.0.0.1:%d", port), "-R", "-t", "1", "-i", "0.5"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "tcp receive") || !strings.Contains(out.String(), "RX") {
		t.Errorf("output:\n%s", out.String())
	}
}

func TestLoadAndServeArgs(t *testing.T) {
	for _, args := range [][]string{
		{"load"},
		{"load", "a", "b"},
		{"load", "h:0"},
		{"load", "h", "-P", "0x"},
		{"load", "h", "-P", "500"},
		{"load", "h", "-t", "0.5"},
		{"load", "h", "-R", "--bidir"},
		{"load", "h", "--spread", "--slave", "eth0"},
		{"load", "h", "--cport", "70000"},
		{"load", "h", "-b", "fast"},
		{"serve", "extra"},
		{"serve", "--max-duration", "0"},
	} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitUsage, errb.String())
		}
	}
	var out bytes.Buffer
	if code := run([]string{"load", "-h"}, &out, &out); code != exitOK || !strings.Contains(out.String(), "--spread") {
		t.Errorf("load -h: %d %s", code, out.String())
	}
}

// Nothing listening: the error says what to run there.
func TestLoadRefused(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	var out, errb bytes.Buffer
	if code := run([]string{"load", fmt.Sprintf("127.0.0.1:%d", port), "-t", "1"}, &out, &errb); code != exitRuntime || !strings.Contains(errb.String(), "iperf3 -s") {
		t.Errorf("exit %d: %s", code, errb.String())
	}
}
