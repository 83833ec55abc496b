package drill

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/bondtop/bondtop/load"
)

// Drill is a prepared drill: the plan, and the peer the measuring streams
// go to. Prepare makes one without changing anything; Run carries it out.
type Drill struct {
	Plan *Plan
	Peer netip.AddrPort
	opts Options
	src  netip.Addr
	// route places the measuring stream's send side on the slave when
	// the bond hashes by port (nil: the kernel's ports).
	route *load.Route
}

// Describe is the plan in a few lines: what the confirmation shows and
// --plan prints.
func (d *Drill) Describe() string {
	var b strings.Builder
	p := d.Plan
	fmt.Fprintf(&b, "failover drill on %s (%s), slave %s, --how %s\n", p.Bond, p.Mode, p.Slave, p.How)
	for i, s := range p.Steps() {
		fmt.Fprintf(&b, "  %d. %s\n", i+1, s)
	}
	fmt.Fprintf(&b, "measuring: %d UDP datagrams/s %s with %s (from %s)\n", d.opts.Rate, directionWords(d.opts.Direction), d.Peer, d.src)
	if d.opts.Direction == RX {
		fmt.Fprintln(&b, "  one test spans both steps: this host sends nothing of its own from the failover until the failback is over, so the switch learns the move from the bond alone")
	}
	fmt.Fprintf(&b, "state file: %s/drill-%s.json until the bond is restored\n", d.opts.StateDir, p.Bond)
	return b.String()
}
