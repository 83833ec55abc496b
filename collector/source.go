package collector

import (
	"context"
	"errors"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector/flowmeter"
	"github.com/bondtop/bondtop/collector/neighbors"
	"github.com/bondtop/bondtop/model"
)

// ErrNoBonding means the host has no bonding driver loaded (no
// /proc/net/bonding and no /sys/class/net/bonding_masters).
var ErrNoBonding = errors.New("no bonding driver on this host (/proc/net/bonding is missing): load it with `modprobe bonding`, or try `bondtop --demo`")

// Reading is what a Source saw at one instant.
type Reading struct {
	// Bonds in name order; each slave list in the kernel's enslave order.
	Bonds []bonding.Bond
	// Warnings name files or attributes that could not be read or parsed;
	// the fields they held are nil, everything else is still reported.
	Warnings []string
	// Unprivileged is set when root-only fields (LACP system and partner
	// details) were hidden from this reader.
	Unprivileged bool
	// NoBonding is set on the empty reading a started Sampler makes when
	// the bonding driver went away (ErrNoBonding).
	NoBonding bool
	// CountersAge is how long before Read returned the counters were
	// read, told by a source that can wait in between (the live host: its
	// procfs and sysfs reads after the netlink dump wait while the kernel
	// holds its lock to enslave or release, some hundred milliseconds
	// under load); zero: just before. Rates run between the times the
	// counters were read, on the Sampler's clock: two snapshots made a
	// few milliseconds apart, after a slow read and a quick one, would
	// otherwise divide a slow read's worth of counting by those
	// milliseconds. Counters read apart from the rest (an Open vSwitch
	// bond's, after the kernel's) carry their own age instead
	// (bonding.Counters.Age).
	CountersAge time.Duration
}

// FlowReading is what a FlowReader saw at one instant.
type FlowReading struct {
	Sockets []model.Socket
	// Kernel is the version the transmit hash is computed for.
	Kernel bonding.KernelVersion
	// Warnings say what could not be read (a dump, a route lookup).
	Warnings []string
}

// Bond returns the bond called name, or nil.
func (r *Reading) Bond(name string) *bonding.Bond { return bondNamed(r.Bonds, name) }

// bondNamed returns the bond called name in bonds, or nil.
func bondNamed(bonds []bonding.Bond, name string) *bonding.Bond {
	for i := range bonds {
		if bonds[i].Name == name {
			return &bonds[i]
		}
	}
	return nil
}

// The Source contract. A Source reads every bond of one host; the Sampler
// (NewSampler) turns its Readings into Snapshots. Read and Close are all a
// source must do. Everything else a host can tell is an optional
// capability: the Sampler asks for each with a type assertion when it is
// made, and a source that lacks one leaves that part of the Snapshot
// empty (and the dashboard's panel says why). Each source is a package
// of its own, which imports this one and nothing else of the engine: the
// live source (collector/live) implements most (its flows and flow meter
// come beside it, in Options); the demo (collector/demo) simulates nearly
// all; a --root tree (collector/rootdir) has what its files hold; the
// fleet view (package fleet) relays what other bondtops measured.
// docs/architecture.md draws the contract; adding a source starts here.
//
//	capability          when a source implements it
//	Notifier            it hears link changes between ticks (netlink)
//	FlowReader          it can list the host's sockets and their paths
//	MeterSource         it brings its own flow meter (the demo's)
//	NeighborReader      it hears LLDP/CDP and LACPDUs on the slaves
//	PortCounterReader   it has carrier and LACPDU counters per slave
//	FirmwareLLDPReader  it can ask a NIC's driver about firmware LLDP
//	PhysicalReader      it reads link modes, FEC and optics (ethtool)
//	HostReader          it reads host-wide settings (sysctls)
//	ConfigReader        its host has configuration files to compare
//	Relay               it passes on what another bondtop measured (the
//	                    fleet, from Prometheus): rates, findings, age
//	Focuser             it reads the bond on screen in more detail
//	Backfiller          it holds a bond's past (the fleet: range queries)
//	Recycler            it refills the arrays of old Readings

// Source reads the current state of every bond on a host.
type Source interface {
	// Read returns every bond with its slaves and counters. The error is
	// for the whole host (ErrNoBonding); per-file trouble goes into
	// Reading.Warnings.
	Read() (Reading, error)
	Close() error
}

// Notifier is implemented by sources that learn of link changes between
// ticks (netlink RTNLGRP_LINK), so a failover is sampled at once.
type Notifier interface {
	// Changes delivers a value, without blocking the sender, whenever the
	// kernel reported a change of a bond or one of its slaves.
	Changes() <-chan struct{}
}

// FlowReader lists this host's connected sockets and the path each one's
// packets take. A Source may implement it (the demo does); on a live host
// it is a live.Flows of its own (sock_diag, routes and neighbours), which
// the caller opens beside the live.Source and hands to the Sampler
// (Options.Flows).
type FlowReader interface {
	ReadFlows() (FlowReading, error)
}

// MeterSource is implemented by sources that bring their own flow meter
// (the demo simulates one); the Sampler uses it when Options.Meter is nil.
type MeterSource interface {
	FlowMeter() flowmeter.Meter
}

// NeighborReader tells what the far end of each slave's cable says about
// itself (LLDP, CDP). The live source is one; so is the demo.
type NeighborReader interface {
	// Watch follows exactly these slaves; the error says why some could
	// not be listened on (neighbors.ErrNoPermission among them).
	Watch(slaves []string) error
	// Neighbor copies the slave's live neighbour, its age at now filled
	// in, into into (a room the Sampler fills again); false when none
	// was heard or its TTL ran out. now is time.Now, read once a tick
	// for all slaves.
	Neighbor(slave string, now time.Time, into *neighbors.Neighbor) bool
	// LACPDUAge is the time from the last LACPDU or marker that arrived
	// on the slave to now; ok is false when none did since listening
	// began.
	LACPDUAge(slave string, now time.Time) (age time.Duration, ok bool)
	// HeardLACPDU copies the last LACPDU the slave received into into;
	// false when none was heard (or listening failed).
	HeardLACPDU(slave string, into *neighbors.LACPDU) bool
}

// PortCounterReader gives each slave's carrier transitions and LACPDU
// counters (the live source, the demo). The two come apart because their
// costs do: the carrier counts come with the link dump every tick reads
// anyway, the LACPDU counters need a kernel request of their own, which
// the Sampler makes at most once a second (lacpduEvery).
type PortCounterReader interface {
	// CarrierCounts sets into[slave], for each of slaves the source's
	// last reading has, to its carrier transitions, nil where the kernel
	// gave none. No kernel request. The counts are never written again:
	// snapshots share them from one tick to the next.
	CarrierCounts(slaves []string, into map[string]*bonding.CarrierCounts)
	// LACPDUCounters asks the kernel for the LACPDU counters of slaves
	// and sets into[slave] for each it has them for (slaves of 802.3ad
	// bonds, Linux 4.19+).
	LACPDUCounters(slaves []string, into map[string]bonding.LACPDUCounters)
}

// FirmwareLLDPReader tells whether a slave's NIC runs an LLDP agent in
// its firmware (the live source, from the driver's private flags).
type FirmwareLLDPReader interface {
	FirmwareLLDP(slave string) (agent, known bool)
}

// PhysicalReader reads one slave's physical layer (the live source). It
// may take long on NICs with slow module access; the Sampler calls it
// every DefaultPhysicalInterval, off its tick after the first time.
type PhysicalReader interface {
	// Physical reads what the driver reports; nil when nothing.
	// needRoot is set when the module EEPROM could not be read for
	// want of CAP_NET_ADMIN.
	Physical(slave string) (p *model.Physical, needRoot bool)
}

// HostReader is implemented by sources that can read host settings.
type HostReader interface {
	ReadHost() model.Host
}

// ConfigReader is implemented by sources whose host has configuration
// files to compare with (the live host, a --root tree).
type ConfigReader interface {
	// ReadConfig reads the configuration and the running settings of
	// the named bonds (and their slaves).
	ReadConfig(bonds []bonding.Bond) *model.HostConfig
}

// Relay is implemented by sources that pass on what another bondtop
// measured and diagnosed (the fleet view, read from Prometheus): such a
// source's counters are as old as the last scrape and seldom differ
// from one tick to the next, so the Sampler shows the rates the source
// gives (and the shares they make) instead of dividing two readings'
// counters, and the findings the source gives instead of leaving them
// empty. A caller should not run its own diagnosis (Options.Analyze)
// over a relayed reading: it holds only what the metrics carry.
type Relay interface {
	// Rate is what the interface moved per second, in bits, over the
	// source's own window: the bond's when slave is "", else that
	// slave's. ok is false when the source has no rate for it.
	Rate(bond, slave string) (rxBps, txBps float64, ok bool)
	// Findings are the bond's findings as the other bondtop made them;
	// nil for none. The Sampler copies the slice header, not the
	// findings: the source must not change a slice it handed out.
	Findings(bond string) []model.Finding
	// DataAge is how old the bond's data was at now (the time since the
	// scrape it comes from); ok false when unknown.
	DataAge(bond string, now time.Time) (age time.Duration, ok bool)
}

// Focuser is implemented by sources that read the bond on screen in
// more detail than the others (the fleet view: its slaves' rates and
// LACP series, which for thousands of bonds would cost three times the
// list). The dashboard tells the Sampler, which tells the source
// (Sampler.Focus); a reading then has the detail for that bond only.
type Focuser interface {
	// Focus names the bond on screen, "" for none (the bond list).
	// It may be called from any goroutine and must not block.
	Focus(bond string)
}

// Backfiller is implemented by sources that hold a bond's past (the
// fleet view: Prometheus' range queries). When a bond first comes on
// screen (Sampler.Focus) the Sampler asks for the rates before its
// history begins and puts them in front (History.Prepend), so the graphs
// show the past hour at once rather than fill from the moment bondtop
// started.
type Backfiller interface {
	// Past returns the bond's rates (the bond's and each slave's) from
	// from to to, oldest first, at times of the source's choosing.
	Past(ctx context.Context, bond string, from, to time.Time) ([]time.Time, []model.BondSample, error)
}

// Recycler is implemented by sources that take back the arrays of a
// Reading their Sampler no longer holds, for the next Read to fill: a
// steady tick then allocates no reading (package
// collector/internal/recycle keeps them). The Sampler calls Recycle where
// it calls Read (a source read from several goroutines guards it as it
// guards Read); a reading that other code got from Read is never handed
// back.
type Recycler interface {
	Recycle(bonds []bonding.Bond)
}
