package live

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/model"
	"github.com/bondtop/bondtop/ovs"
)

// ovsBonds adds the host's Open vSwitch bonds to what the live kernel
// source read: the same bonding.Bond model, Kind "ovs", the bridge, OVS's
// mode words, and member counters from netlink like any Linux slave's.
// Events come from successive readings, as for Linux bonds.
type ovsBonds struct {
	client *ovs.Client
	// explicit is set when the run directory was asked for (--ovs-rundir):
	// then a missing OVS is a warning, not silence.
	explicit bool
	links    memberLinks
	// now is the live source's clock: the times counters are read on.
	now func() time.Time
}

// ovsReadTimeout bounds one OVS read: both daemons answer in
// milliseconds; a stuck ovs-vswitchd must not stall the sampler.
const ovsReadTimeout = 2 * time.Second

// memberLinks reads a member's kernel link (counters, operstate, MTU).
type memberLinks interface {
	read(name string, ifindex *int64, s *bonding.Slave) error
}

// newOVSBonds reads from rundir ("" means ovs.DefaultRunDir, where a host
// without OVS is not worth a warning).
func newOVSBonds(rundir string, now func() time.Time) *ovsBonds {
	return &ovsBonds{client: ovs.NewClient(rundir), explicit: rundir != "", links: netlinkMembers{}, now: now}
}

func (o *ovsBonds) close() { o.client.Close() }

// add merges the OVS bonds into the kernel's reading r (read with
// kernelErr): Linux bonds get Kind "linux", all stay in name order. A
// host with OVS bonds and no bonding driver is fine; with neither, the
// kernel's error stands.
//
// OVS answers after the kernel's counters were read, in milliseconds or,
// from a busy ovs-vswitchd, up to ovsReadTimeout: the kernel's counters
// age by that wait (r.CountersAge), and each OVS bond's counters carry
// their own age, from when its members were read.
func (o *ovsBonds) add(r collector.Reading, kernelErr error) (collector.Reading, error) {
	if kernelErr != nil && !errors.Is(kernelErr, collector.ErrNoBonding) {
		return r, kernelErr
	}
	started := o.now()
	kernelBonds := len(r.Bonds)
	var membersRead []time.Time // by OVS bond, in r.Bonds[kernelBonds:]
	for i := range r.Bonds {
		if r.Bonds[i].Kind == "" {
			r.Bonds[i].Kind = bonding.KindLinux
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), ovsReadTimeout)
	defer cancel()
	host, err := o.client.Read(ctx)
	switch {
	case err != nil:
		if o.explicit || !errors.Is(err, os.ErrNotExist) {
			r.Warnings = append(r.Warnings, "open vswitch: "+err.Error())
		}
	default:
		if host.VswitchdErr != nil {
			r.Warnings = append(r.Warnings, "open vswitch: bond/show and lacp/show unreadable, members' state is OVSDB's: "+host.VswitchdErr.Error())
		}
		for i := range host.Bonds {
			b := model.FromOVS(&host.Bonds[i])
			r.Warnings = append(r.Warnings, readMembers(o.links, &host.Bonds[i], &b)...)
			membersRead = append(membersRead, o.now())
			r.Bonds = append(r.Bonds, b)
		}
	}
	done := o.now()
	r.CountersAge += done.Sub(started)
	for i, at := range membersRead {
		ageCounters(&r.Bonds[kernelBonds+i], done.Sub(at))
	}
	if kernelErr != nil && len(r.Bonds) == 0 {
		if err != nil && o.explicit {
			return r, fmt.Errorf("%w; and %v", kernelErr, err)
		}
		return r, kernelErr
	}
	sort.SliceStable(r.Bonds, func(i, j int) bool { return r.Bonds[i].Name < r.Bonds[j].Name })
	return r, nil
}

// ageCounters gives the counters of b and of its slaves the age d.
func ageCounters(b *bonding.Bond, d time.Duration) {
	b.Counters.SetAge(d)
	for i := range b.Slaves {
		b.Slaves[i].Counters.SetAge(d)
	}
}

// readMembers gives each member of b (from ob) its kernel link's counters,
// or where there is no kernel link (a DPDK port) OVSDB's statistics
// (refreshed every 5 s), then the bond the sum of its members'. It
// returns a warning for each member with neither.
func readMembers(links memberLinks, ob *ovs.Bond, b *bonding.Bond) []string {
	var warnings []string
	for j := range b.Slaves {
		m := &ob.Members[j]
		if err := links.read(m.Name, m.IfIndex, &b.Slaves[j]); err != nil {
			if !ovsdbCounters(m.Statistics, &b.Slaves[j].Counters) {
				warnings = append(warnings, fmt.Sprintf("open vswitch: %s member %s: %v", b.Name, m.Name, err))
			}
		}
	}
	model.SumMemberCounters(b)
	return warnings
}

// ovsdbCounterKeys maps Interface.statistics keys to our counters.
var ovsdbCounterKeys = map[string]bonding.Counter{
	"rx_bytes": bonding.RxBytes, "tx_bytes": bonding.TxBytes,
	"rx_packets": bonding.RxPackets, "tx_packets": bonding.TxPackets,
	"rx_errors": bonding.RxErrors, "tx_errors": bonding.TxErrors,
	"rx_dropped": bonding.RxDropped, "tx_dropped": bonding.TxDropped,
}

// ovsdbCounters fills cs from OVSDB's statistics of an interface; false
// when OVSDB has none (ovs-vswitchd has not filled the column yet).
func ovsdbCounters(stats map[string]int64, cs *bonding.Counters) bool {
	found := false
	for k, c := range ovsdbCounterKeys {
		if v, ok := stats[k]; ok && v >= 0 {
			cs.Set(c, uint64(v))
			found = true
		}
	}
	return found
}
