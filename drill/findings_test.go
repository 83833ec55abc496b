package drill

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestFindings(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	soft := &Plan{Bond: "bond0", Mode: "active-backup", Slave: "a0", How: Active, Settings: Settings{NumPeerNotif: 0, MIIMonMs: 100}}
	res := &Result{Direction: RX, Phases: []Phase{{Name: "failover", GapRxMs: f(9600), ActiveMs: f(1)}, {Name: "failback", GapRxMs: f(20)}}}
	got := findings(soft, res)
	if len(got) != 1 || !strings.Contains(got[0], "soft failover without gratuitous ARP or unsolicited NA: rx gap 9600 ms; num_grat_arp is 0 and num_unsol_na is 0") ||
		!strings.Contains(got[0], "set num_grat_arp 1 and num_unsol_na 1") {
		t.Errorf("soft failover: %q", got)
	}
	// A gap of 1 s names no knob; an NA alone is a notification.
	res.Phases[0].GapRxMs = f(1000)
	if got := findings(soft, res); len(got) != 1 || strings.Contains(got[0], "num_grat_arp") {
		t.Errorf("soft failover, 1 s: %q", got)
	}
	res.Phases[0].GapRxMs = f(3000)
	res.Phases[0].GARP.UnsolNA = 1
	if got := findings(soft, res); len(got) != 1 || strings.Contains(got[0], "num_unsol_na") {
		t.Errorf("soft failover with an NA: %q", got)
	}
	// num_grat_arp 2 asked, nothing left: one finding, with the gap.
	soft2 := *soft
	soft2.Settings.NumPeerNotif = 2
	res.Phases[0].GARP.UnsolNA = 0
	if got := findings(&soft2, res); len(got) != 1 || !strings.Contains(got[0], "rx gap 3000 ms; num_grat_arp and num_unsol_na are 2, yet none left") {
		t.Errorf("soft failover, notifications asked and missing: %q", got)
	}
	// Both directions: the host's own datagrams hid the missing GARP.
	res.Direction = Both
	res.Phases[0].GapRxMs = f(30)
	if got := findings(soft, res); len(got) != 1 || !strings.Contains(got[0], "--direction rx measures that") {
		t.Errorf("soft failover measured both ways: %q", got)
	}
	// --direction rx, and this host sent something of its own.
	res.Direction = RX
	n := 2
	res.Phases[0].HostFrames, res.Phases[0].HostFrameKinds = &n, []string{"IPv4 TCP"}
	if got := findings(soft, res); len(got) != 1 || !strings.Contains(got[0], "failover: this host sent 2 frame(s) of its own after the action (IPv4 TCP)") {
		t.Errorf("rx drill with host frames: %q", got)
	}

	prim := &Plan{Bond: "bond0", Mode: "active-backup", Slave: "a0", How: Down, Settings: Settings{NumPeerNotif: 1, MIIMonMs: 100, Primary: "a0"}}
	res = &Result{Phases: []Phase{
		{Name: "failover", GapTxMs: f(80), GapRxMs: f(90), EventMs: f(60), ActiveMs: f(60), ActiveSlave: "a1", GARP: GARP{Count: 1}},
		{Name: "failback", GapTxMs: f(1800), GapRxMs: f(30), EventMs: f(10), ActiveMs: f(10), ActiveSlave: "a0", GARP: GARP{Count: 1}}}}
	got = findings(prim, res)
	if len(got) != 1 || !strings.Contains(got[0], "failback gap 1800 ms: updelay 0 brings a0 back before its switch port forwards; try updelay 2000") {
		t.Errorf("failback: %q", got)
	}

	// A clean drill has nothing to say; a slow, quiet one does.
	res.Phases[1].GapTxMs = f(40)
	if got := findings(prim, res); len(got) != 0 {
		t.Errorf("clean drill: %q", got)
	}
	res.Phases[0].EventMs = f(400)
	res.Phases[0].GARP.Count = 0
	res.Phases[1].ActiveSlave = "a1"
	got = findings(prim, res)
	want := []string{"no gratuitous ARP or unsolicited NA", "noticed a0 going down after 400 ms (miimon 100", "no failback: a0 is the primary but a1 stayed active"}
	if len(got) != len(want) {
		t.Fatalf("findings %q, want %d", got, len(want))
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("finding %d %q, want %q", i, got[i], w)
		}
	}
}

// The JSON document has the keys; the text table a row a phase.
func TestResultOutput(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	u := func(v uint64) *uint64 { return &v }
	r := &Result{Bond: "bond0", Mode: "active-backup", Slave: "a0", How: Down, Peer: "10.0.0.2:5201", Estimate: true,
		Direction: Both, Rate: 1000, HoldMs: 5000, Restored: true,
		Phases: []Phase{{Name: "failover", Action: "a0 down", ActionTime: time.Unix(1, 0), EventMs: f(51.2), GapTxMs: f(48), GapRxMs: f(52),
			LostTx: u(48), LostRx: u(52), Reordered: u(0), GARP: GARP{Count: 1, FirstMs: f(55), Expected: 1}, ActiveSlave: "a1"}}}
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"bond", "mode", "slave", "how", "peer", "estimate", "phases", "findings", "restored"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("no %q in %s", k, b.String())
		}
	}
	ph := doc["phases"].([]any)[0].(map[string]any)
	for _, k := range []string{"name", "action_time", "event_ms", "gap_tx_ms", "gap_rx_ms", "lost_tx", "lost_rx", "reordered", "garp", "lacp_settle_ms"} {
		if _, ok := ph[k]; !ok {
			t.Errorf("no phase key %q", k)
		}
	}
	if g := ph["garp"].(map[string]any); g["count"] != 1.0 || g["first_ms"] != 55.0 {
		t.Errorf("garp %v", g)
	}
	b.Reset()
	r.WriteText(&b)
	text := b.String()
	for _, w := range []string{"failover  a0 down", "51 ms", "48 ms*", "1/0 (55 ms)", "findings: none", "restored"} {
		if !strings.Contains(text, w) {
			t.Errorf("text lacks %q:\n%s", w, text)
		}
	}
	if strings.Contains(text, "rx: ") {
		t.Errorf("both directions, yet the rx line:\n%s", text)
	}

	// --direction rx says how it kept quiet, and what left all the same.
	zero, two := 0, 2
	r.Direction, r.Estimate = RX, false
	r.Phases[0].HostFrames, r.Phases[0].GARP.Reports = &zero, 2
	r.Notes = []string{"a note"}
	b.Reset()
	r.WriteText(&b)
	text = b.String()
	for _, w := range []string{"1/0 +2 IGMP/MLD (55 ms)", "no keep-alive and no result until the failback is over; none of its frames left", "note: a note"} {
		if !strings.Contains(text, w) {
			t.Errorf("rx text lacks %q:\n%s", w, text)
		}
	}
	r.Phases[0].HostFrames, r.Phases[0].HostFrameKinds = &two, []string{"ARP reply"}
	b.Reset()
	r.WriteText(&b)
	if !strings.Contains(b.String(), "yet 2 frame(s) of its own left meanwhile (ARP reply)") {
		t.Errorf("rx text with host frames:\n%s", b.String())
	}
}
