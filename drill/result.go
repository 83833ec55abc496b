package drill

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Result is a drill's outcome. Its JSON keys are an interface.
type Result struct {
	Bond  string `json:"bond"`
	Mode  string `json:"mode"`
	Slave string `json:"slave"`
	How   How    `json:"how"`
	Peer  string `json:"peer"`
	// Estimate is set when a gap is computed from the packets lost and
	// the rate rather than timed (the send side, measured at the peer).
	Estimate  bool      `json:"estimate"`
	Direction Direction `json:"direction"`
	Rate      int       `json:"rate_pps"`
	HoldMs    int64     `json:"hold_ms"`
	// StreamSlave is the slave the stream this host sends was placed on
	// (a bond that hashes by port), "" when the kernel chose.
	StreamSlave string   `json:"stream_slave,omitempty"`
	Phases      []Phase  `json:"phases"`
	Findings    []string `json:"findings"`
	// Restored is set when the slave's admin state and the bond's
	// active slave are as they were before the drill.
	Restored bool `json:"restored"`
	// Interrupted says why the drill ended early ("" when it did not).
	Interrupted string `json:"interrupted,omitempty"`
	// Notes say how the drill measured, where that matters for the
	// numbers (how --direction rx kept this host silent, a move of the
	// active slave that sent something of its own).
	Notes []string `json:"notes,omitempty"`
}

// Phase is one step of a drill (failover, failback) as measured.
type Phase struct {
	Name       string    `json:"name"`
	Action     string    `json:"action"`
	ActionTime time.Time `json:"action_time"`
	// EventMs is the time from the action to the bond's own event (its
	// active slave or a slave's link state changing, as netlink says);
	// null when the bond did not react.
	EventMs *float64 `json:"event_ms"`
	// ActiveSlave is the bond's active slave at the end of the phase,
	// ActiveMs when it became so (null: no change).
	ActiveSlave string   `json:"active_slave,omitempty"`
	ActiveMs    *float64 `json:"active_ms"`
	// The longest silence each way (null: no stream that way), the
	// datagrams lost and those this host received out of order. GapRxOpen
	// is set when the receive side never came back within the phase.
	GapTxMs   *float64 `json:"gap_tx_ms"`
	GapRxMs   *float64 `json:"gap_rx_ms"`
	GapRxOpen bool     `json:"gap_rx_open,omitempty"`
	LostTx    *uint64  `json:"lost_tx"`
	LostRx    *uint64  `json:"lost_rx"`
	Reordered *uint64  `json:"reordered"`
	GARP      GARP     `json:"garp"`
	// LACPSettleMs (802.3ad) is when the bond's usable ports were again
	// what they should be: the rest without the slave, or all with it.
	LACPSettleMs *float64 `json:"lacp_settle_ms"`
	// HostFrames (--direction rx; null otherwise) counts the frames this
	// host sent by the slaves from the action to the end of the phase
	// besides the bond's peer notifications: each could have taught the
	// switch the bond's new port. HostFrameKinds names them.
	HostFrames     *int     `json:"host_frames"`
	HostFrameKinds []string `json:"host_frame_kinds,omitempty"`
}

// GARP counts the peer notifications that left the bond's slaves.
type GARP struct {
	// Count is gratuitous ARPs, UnsolNA unsolicited neighbour
	// advertisements, Reports IGMP and MLD membership reports (resend_igmp);
	// FirstMs the first of any of them after the action.
	Count   int      `json:"count"`
	FirstMs *float64 `json:"first_ms"`
	UnsolNA int      `json:"unsol_na"`
	Reports int      `json:"reports"`
	// Slaves they left by; Expected is num_grat_arp (-1: unknown).
	Slaves   []string `json:"slaves"`
	Expected int      `json:"expected"`
}

// WriteJSON prints r as one indented JSON document.
func (r *Result) WriteJSON(w io.Writer) error {
	if r.Findings == nil {
		r.Findings = []string{}
	}
	if r.Phases == nil {
		r.Phases = []Phase{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText prints r as a short table a person can paste into a change
// ticket.
func (r *Result) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%s (%s): drill of %s, --how %s, hold %s, peer %s, %d datagrams/s %s\n",
		r.Bond, r.Mode, r.Slave, r.How, time.Duration(r.HoldMs)*time.Millisecond, r.Peer, r.Rate, directionWords(r.Direction))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "phase\taction\tbond event\tactive\tgap tx\tgap rx\tlost tx/rx\treordered\tGARP/NA (first)\tLACP settled\t")
	for _, p := range r.Phases {
		rx := ms(p.GapRxMs)
		if p.GapRxOpen {
			rx = ">" + rx
		}
		tx := ms(p.GapTxMs)
		if r.Estimate && p.GapTxMs != nil {
			tx += "*"
		}
		garp := fmt.Sprintf("%d/%d", p.GARP.Count, p.GARP.UnsolNA)
		if p.GARP.Reports > 0 {
			garp += fmt.Sprintf(" +%d IGMP/MLD", p.GARP.Reports)
		}
		if p.GARP.FirstMs != nil {
			garp += " (" + ms(p.GARP.FirstMs) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s/%s\t%s\t%s\t%s\t\n", p.Name, p.Action, ms(p.EventMs), orDash(p.ActiveSlave),
			tx, rx, count(p.LostTx), count(p.LostRx), count(p.Reordered), garp, ms(p.LACPSettleMs))
	}
	tw.Flush()
	if r.Estimate {
		fmt.Fprintln(w, "* estimated from the datagrams the peer lost and when they were sent")
	}
	if r.Direction == RX {
		fmt.Fprintln(w, r.quietWords())
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if r.Interrupted != "" {
		fmt.Fprintf(w, "interrupted: %s\n", r.Interrupted)
	}
	if len(r.Findings) == 0 {
		fmt.Fprintln(w, "findings: none")
	} else {
		fmt.Fprintln(w, "findings:")
		for _, f := range r.Findings {
			fmt.Fprintf(w, "  - %s\n", f)
		}
	}
	if r.Restored {
		fmt.Fprintln(w, "restored: the slave's admin state and the active slave are as before")
	} else {
		fmt.Fprintf(w, "NOT restored: run bondtop drill %s --restore\n", r.Bond)
	}
	return nil
}

// quietWords says how a --direction rx drill kept this host from
// teaching the switch, and what it saw leave all the same.
func (r *Result) quietWords() string {
	const how = "rx: one test spans failover and failback; this host sends no datagram, no keep-alive and no result until the failback is over"
	sent, watched := 0, false
	var kinds []string
	for _, p := range r.Phases {
		if p.HostFrames != nil {
			watched = true
			sent += *p.HostFrames
			for _, k := range p.HostFrameKinds {
				if !slices.Contains(kinds, k) {
					kinds = append(kinds, k)
				}
			}
		}
	}
	switch {
	case !watched:
		return how
	case sent == 0:
		return how + "; none of its frames left meanwhile but the bond's own notifications"
	}
	return fmt.Sprintf("%s; yet %d frame(s) of its own left meanwhile (%s)", how, sent, strings.Join(kinds, ", "))
}

func directionWords(d Direction) string {
	switch d {
	case RX:
		return "from the peer only"
	case TX:
		return "to the peer only"
	}
	return "each way"
}

func ms(v *float64) string {
	if v == nil {
		return "-"
	}
	if *v >= 10000 {
		return fmt.Sprintf("%.1f s", *v/1000)
	}
	return fmt.Sprintf("%.0f ms", *v)
}

func count(v *uint64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func msSince(t0, t time.Time) *float64 {
	v := float64(t.Sub(t0).Microseconds()) / 1000
	return &v
}

func ptr[T any](v T) *T { return &v }
