package drill

import (
	"errors"
	"fmt"
	"time"
)

// How is the way the drill takes a slave away.
type How string

// The ways of taking a slave away.
const (
	// Down sets the slave administratively down: a pulled cable, as the
	// bond sees it.
	Down How = "down"
	// Active moves the bond's active_slave to another slave; no link
	// goes down, and the switch learns of the move only from what the
	// bond sends (gratuitous ARPs, unsolicited NAs, IGMP/MLD reports).
	Active How = "active"
)

// Direction is which way the measuring streams flow.
type Direction string

// The directions of the measuring streams, from this host's side.
const (
	Both Direction = "both"
	RX   Direction = "rx" // only the peer sends
	TX   Direction = "tx" // only this host sends
)

// Defaults of a drill.
const (
	DefaultHold = 5 * time.Second
	// DefaultRate is the measuring streams' datagrams per second each
	// way: one a millisecond, so a gap is known to the millisecond.
	DefaultRate = 1000
	// DefaultStateDir holds the state file of a running drill.
	DefaultStateDir = "/run/bondtop"
)

// Options say which drill to run. The zero value of each field is its
// default.
type Options struct {
	Bond string
	// Peer is HOST or HOST:PORT of bondtop serve or iperf3 -s.
	Peer string
	// Slave to take away ("": the active slave, else the one carrying
	// the most traffic).
	Slave     string
	How       How
	Hold      time.Duration
	Direction Direction
	// Rate is datagrams per second each way (DefaultRate when 0).
	Rate int
	// Force takes the bond's last usable slave away too.
	Force bool
	// StateDir is where the state file goes (DefaultStateDir when "").
	StateDir string
}

// Errors that say why a drill did not start; the command exits 2 on them.
var (
	ErrNotRoot = errors.New("the drill changes links: it needs root (CAP_NET_ADMIN)")
	ErrRefused = errors.New("refused")
)

func (o Options) withDefaults() (Options, error) {
	if o.Bond == "" {
		return o, errors.New("no bond: give the bond to drill")
	}
	if o.Peer == "" {
		return o, errors.New("no peer: give --peer HOST[:PORT] running bondtop serve or iperf3 -s")
	}
	switch o.How {
	case "":
		o.How = Down
	case Down, Active:
	default:
		return o, fmt.Errorf("--how %q: give down or active", o.How)
	}
	switch o.Direction {
	case "":
		o.Direction = Both
	case Both, RX, TX:
	default:
		return o, fmt.Errorf("--direction %q: give both, rx or tx", o.Direction)
	}
	if o.Hold == 0 {
		o.Hold = DefaultHold
	}
	if o.Hold < 500*time.Millisecond || o.Hold > 10*time.Minute {
		return o, fmt.Errorf("--hold %v: give 500ms to 10m", o.Hold)
	}
	if o.Rate == 0 {
		o.Rate = DefaultRate
	}
	if o.Rate < 100 || o.Rate > 20000 {
		return o, fmt.Errorf("rate %d datagrams/s: give 100 to 20000", o.Rate)
	}
	if o.StateDir == "" {
		o.StateDir = DefaultStateDir
	}
	return o, nil
}

// Validate checks o as Run would, without touching anything.
func (o Options) Validate() error {
	_, err := o.withDefaults()
	return err
}
