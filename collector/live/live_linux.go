package live

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mdlayher/ethtool"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/internal/hostfiles"
	"github.com/bondtop/bondtop/collector/internal/recycle"
	"github.com/bondtop/bondtop/collector/neighbors"
)

// liveConfigRefresh is how often the live source re-reads a bond's sysfs
// configuration, ethtool speeds and (outside 802.3ad) procfs when no link
// notification asked for it: a few things change without one.
const liveConfigRefresh = 10 * time.Second

// liveOrderRecheck bounds how often a slave set that disagrees with the
// cached enslave order forces an early refresh (a missed notification).
const liveOrderRecheck = time.Second

// liveDumpAttempts is how many times an RTM_GETLINK dump that the kernel
// flags as interrupted (links changed during it) is retried.
const liveDumpAttempts = 3

// netlinkTimeout bounds a netlink exchange, so a wedged kernel answer
// fails a Read instead of hanging the sampler.
var netlinkTimeout = unix.Timeval{Sec: 5}

// errLiveClosed is returned by Read after Close.
var errLiveClosed = errors.New("live source is closed")

// Source reads the bonds of the running kernel. Each Read takes one
// RTM_GETLINK dump on a persistent rtnetlink socket (bond and slave
// attributes, 64-bit counters) and, for 802.3ad bonds, /proc/net/bonding
// (partner details, churn: no notification announces them). What costs a
// file or a query per value is cached per bond: sysfs (the enslave order,
// speed and duplex fallbacks, options old kernels leave out of the dump),
// ethtool speed and duplex, procfs of other modes. A link notification
// about a bond or its slaves re-queries ethtool for the slaves whose link
// changed, and re-reads sysfs only when the slave set changed or the dump
// lacks options; everything is re-read every liveConfigRefresh.
//
// Merge order, most trusted first: netlink (and ethtool), procfs, sysfs.
// Netlink also decides which slaves exist: a cached file cannot bring back
// a released slave or an active slave the kernel no longer has.
type Source struct {
	fsys        fs.FS // "/": procfs and sysfs
	rtnl        *rtnlConn
	eth         *ethtool.Client // nil when the kernel lacks the ethtool family
	ethWarning  string          // why eth is nil, when that is not "too old"
	capNetAdmin bool
	ns          netns.NsHandle // the network namespace watched, for resubscribing
	now         func() time.Time
	refresh     time.Duration

	// gen counts relevant link notifications; a cached bond read at an
	// older gen is stale.
	gen     atomic.Uint64
	watched atomic.Pointer[map[int]struct{}] // ifindexes of bonds and slaves
	changes chan struct{}
	done    chan struct{}
	wg      sync.WaitGroup
	close   sync.Once

	mu     sync.Mutex // serialises Read and Close
	closed bool
	cache  map[string]*liveBond
	msgs   [][]byte // the dump's bond and slave messages, in arena or a memo
	arena  []byte   // copies of the kept messages of the last dump
	// msgMemos is, for each of msgs, the memo the dump found it to
	// repeat but for its counters (its counters already put in), or nil:
	// news for decode (take fills both).
	msgMemos   []*linkMemo
	watchedIdx []int
	// memo holds each bond's and slave's last message, decoded, by
	// ifindex (memo_linux.go); decodes counts the decodes.
	memo    map[int32]*linkMemo
	decodes uint64
	// Scratch of one build, reused: the decoded bonds and slaves, one
	// bond's slaves, the ifindexes to watch.
	bondsBuf  []dumpedBond
	slavesBuf []dumpedSlave
	mineBuf   []dumpedSlave
	idxBuf    []int
	// arrays are the readings the Sampler handed back (Recycle).
	arrays   recycle.Arrays
	noAggBuf []string
	// statsWanted is LACPDUCounters' scratch: the slaves it reads; and
	// noStatsDump is set once the kernel refused a statistics dump.
	statsWanted []statsWant
	noStatsDump bool

	nb   *neighbors.Listener // LLDP/CDP on the slaves (neighbors_linux.go)
	phys *physConn           // ethtool link state, FEC, module (physical_linux.go); nil without the family
	ovs  *ovsBonds           // Open vSwitch bonds read beside the kernel's; nil unless ReadOVS
}

// liveBond is what the live source keeps between Reads for one bond.
type liveBond struct {
	index     int    // a bond re-created under the same name starts afresh
	gen       uint64 // notification generation the cache was read at
	readAt    time.Time
	checkedAt time.Time
	sysfs     bonding.SysfsResult
	proc      *bonding.Bond // nil when unreadable or unparsable
	procWarn  string
	speeds    []ethSpeed
	// procText is the procfs text proc and procWarn were parsed from
	// (nil when it could not be read), and procFile its path: the text
	// is read every tick, and parsed again only when it changed.
	procText []byte
	procFile string
	procRead keptFile // procFile, kept open between reads
	// What of proc and sysfs may fill the netlink bond (trustNetlink),
	// kept while they and what netlink says of the bond stay; the
	// generations count the reads that changed proc and sysfs.
	procTrusted, sysfsTrusted trustedCopy
	procGen, sysfsGen         uint64
	// speedsGen counts the ethtool reads that made speeds; merged is the
	// bond built last, and what from.
	speedsGen uint64
	merged    mergedBond
}

// ethSpeed is one slave's ethtool link mode, with the link state it was
// queried in.
type ethSpeed struct {
	name   string
	index  int
	key    uint64
	speed  *int
	duplex *string
	warn   string
}

// dumpedBond is one bonding master of a dump.
type dumpedBond struct {
	link    *netlink.Bond
	attrs   bonding.BondAttrs
	attrsOK bool
	memo    *linkMemo // the link's memo, which keeps the bond built from it
}

// dumpedSlave is one link of a dump enslaved to a bond.
type dumpedSlave struct {
	link    netlink.Link
	attrs   bonding.SlaveAttrs
	attrsOK bool
	memo    *linkMemo // the link's memo, which keeps the slave built from it
}

var (
	_ collector.Source   = (*Source)(nil)
	_ collector.Notifier = (*Source)(nil)
)

// New opens the netlink handles (rtnetlink, ethtool genetlink)
// of the calling thread's network namespace and subscribes to link
// notifications. Close releases them.
func New() (*Source, error) {
	rtnl, err := openRtnl()
	if err != nil {
		return nil, fmt.Errorf("open rtnetlink socket: %w", err)
	}
	s := &Source{
		fsys:        os.DirFS("/"),
		rtnl:        rtnl,
		capNetAdmin: hasCapNetAdmin(),
		ns:          netns.None(),
		now:         time.Now,
		refresh:     liveConfigRefresh,
		changes:     make(chan struct{}, 1),
		done:        make(chan struct{}),
		cache:       make(map[string]*liveBond),
		nb:          neighbors.NewListener(nil),
	}
	if ns, err := netns.Get(); err == nil {
		s.ns = ns
	}
	// A kernel before 5.6 has no ethtool netlink family: sysfs speed and
	// duplex stand in, quietly.
	if eth, err := ethtool.New(); err == nil {
		s.eth = eth
	} else if !errors.Is(err, os.ErrNotExist) {
		s.ethWarning = fmt.Sprintf("ethtool netlink: %v (speed and duplex come from sysfs)", err)
	}
	s.phys, _ = openPhysConn()
	ch, subDone, err := s.subscribe(false)
	if err != nil {
		s.release()
		return nil, fmt.Errorf("subscribe to link notifications: %w", err)
	}
	s.wg.Add(1)
	go s.watch(ch, subDone)
	return s, nil
}

// Changes implements collector.Notifier: a value arrives, without blocking the
// notification reader, when the kernel announced a change of a bond or of
// one of its slaves (carrier, failover, enslave, release, options).
func (s *Source) Changes() <-chan struct{} { return s.changes }

// Recycle implements collector.Recycler: it takes back a reading's arrays for
// the next Read, so a Sampler's steady tick allocates no reading.
func (s *Source) Recycle(bonds []bonding.Bond) {
	s.mu.Lock()
	s.arrays.Put(bonds)
	s.mu.Unlock()
}

// Close stops the notification goroutine and closes the sockets. It waits
// for a Read in progress.
func (s *Source) Close() error {
	s.close.Do(func() {
		close(s.done)
		s.wg.Wait()
		s.mu.Lock()
		defer s.mu.Unlock()
		s.closed = true
		s.dropBonds(func(string) bool { return true })
		s.release()
		_ = s.nb.Close()
	})
	return nil
}

// release closes what New opened.
func (s *Source) release() {
	s.rtnl.close()
	if s.eth != nil {
		_ = s.eth.Close()
	}
	s.phys.close()
	if s.ns.IsOpen() {
		_ = s.ns.Close()
	}
	if s.ovs != nil {
		s.ovs.close()
	}
}

// Read implements collector.Source: the kernel's bonds, and Open vSwitch's when
// ReadOVS asked for them.
func (s *Source) Read() (collector.Reading, error) {
	r, err := s.readKernel()
	if s.ovs != nil {
		return s.ovs.add(r, err)
	}
	return r, err
}

// readKernel reads the bonding driver's bonds.
func (s *Source) readKernel() (collector.Reading, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return collector.Reading{}, errLiveClosed
	}
	// Taken before the dump: a notification during this Read makes the
	// next one refresh again.
	gen := s.gen.Load()
	var r collector.Reading
	if err := s.dumpLinks(&r, isBondLink); err != nil {
		return collector.Reading{}, err
	}
	dumped := s.now() // the dump holds every link's counters
	if err := s.build(&r, gen, dumped); err != nil {
		return collector.Reading{}, err
	}
	r.CountersAge = s.now().Sub(dumped)
	return r, nil
}

// isBondLink keeps the messages of bonds and of their slaves.
func isBondLink(scan bonding.LinkScan) bool { return scan.Bond || scan.Slave }

// dumpLinks takes one RTM_GETLINK dump into s.msgs, keeping (copied into
// s.arena) the messages keep accepts. Other links are only scanned, never
// decoded: a container host may have hundreds.
func (s *Source) dumpLinks(r *collector.Reading, keep func(bonding.LinkScan) bool) error {
	for attempt := 1; ; attempt++ {
		s.msgs, s.arena, s.msgMemos = s.msgs[:0], s.arena[:0], s.msgMemos[:0]
		// No IFLA_EXT_MASK: without RTEXT_FILTER_VF the kernel leaves
		// out the VF tables that make dumps heavy on SR-IOV hosts.
		err := s.rtnl.dump(unix.RTM_GETLINK, anyIfInfomsg[:], unix.RTM_NEWLINK, func(msg []byte) { s.take(msg, keep) })
		switch {
		case err == nil:
			return nil
		case !errors.Is(err, netlink.ErrDumpInterrupted) && !errors.Is(err, errReplyTruncated):
			return fmt.Errorf("netlink link dump: %w", err)
		case attempt == liveDumpAttempts:
			r.Warnings = append(r.Warnings, "netlink link dump: interrupted by link changes; a bond or slave may be missing from this reading")
			return nil
		}
	}
}

// take keeps one dumped message in s.msgs when keep accepts its link. A
// bond's or slave's message like its last but for the counters goes to
// its memo, straight from the receive buffer, neither scanned nor copied
// aside; another is copied into s.arena, for decode.
func (s *Source) take(msg []byte, keep func(bonding.LinkScan) bool) {
	if m := s.memoFor(msg); m != nil && keep(m.scan) {
		s.msgs, s.msgMemos = append(s.msgs, m.msg), append(s.msgMemos, m)
		return
	}
	if scan, ok := bonding.ScanLink(msg); ok && keep(scan) {
		s.msgs, s.msgMemos = append(s.msgs, s.keepMsg(msg)), append(s.msgMemos, nil)
	}
}

// anyIfInfomsg is the struct ifinfomsg of a dump of every link.
var anyIfInfomsg [unix.SizeofIfInfomsg]byte

// keepMsg copies msg, which lives in the receive buffer, into s.arena.
// An arena that grows leaves the messages copied before in its old
// array, where they stay valid.
func (s *Source) keepMsg(msg []byte) []byte {
	start := len(s.arena)
	s.arena = append(s.arena, msg...)
	return s.arena[start:len(s.arena):len(s.arena)]
}

// build turns the dumped messages into the Reading: the netlink view of
// each bond, merged with procfs and sysfs. now is the dump's time, which
// the refresh timers count from (one clock read less a tick).
func (s *Source) build(r *collector.Reading, gen uint64, now time.Time) error {
	bonds, slaves := s.decode(r)
	r.Unprivileged = !s.capNetAdmin
	if s.ethWarning != "" {
		r.Warnings = append(r.Warnings, s.ethWarning)
	}
	if len(bonds) == 0 {
		s.dropBonds(func(string) bool { return true })
		s.setWatched(nil)
		if !s.driverLoaded() {
			return collector.ErrNoBonding
		}
		return nil
	}
	r.Bonds = s.arrays.TakeBonds(len(bonds))
	for i := range bonds {
		r.Bonds = append(r.Bonds, s.readBond(r, &bonds[i], slaves, gen, now))
	}
	s.dropBonds(func(name string) bool { return r.Bond(name) == nil })
	idx := s.idxBuf[:0]
	defer func() { s.idxBuf = idx }()
	for _, b := range bonds {
		idx = append(idx, b.link.Index)
	}
	for _, sl := range slaves {
		idx = append(idx, sl.link.Attrs().Index)
	}
	s.setWatched(idx)
	return nil
}

// decode decodes the kept messages: the bonds (sorted by name) and the
// links enslaved to a bond (in ifindex order).
func (s *Source) decode(r *collector.Reading) ([]dumpedBond, []dumpedSlave) {
	bonds, slaves := s.bondsBuf[:0], s.slavesBuf[:0]
	defer func() { s.bondsBuf, s.slavesBuf = bonds, slaves }()
	if s.memo == nil {
		s.memo = make(map[int32]*linkMemo)
	}
	s.decodes++
	for i, msg := range s.msgs {
		m := s.msgMemos[i]
		if m == nil {
			// The link keeps slices of the message it is decoded from
			// (its hardware address): the memo owns that copy.
			msg = bytes.Clone(msg)
			link, err := deserializeLink(msg)
			if err != nil {
				r.Warnings = append(r.Warnings, fmt.Sprintf("netlink link dump: %v", err))
				continue
			}
			m = s.remember(msg, link)
			m.scan, _ = bonding.ScanLink(msg)
			if _, ok := link.(*netlink.Bond); ok {
				m.bondAttrs, m.attrsOK = bonding.ParseBondAttrs(msg)
			} else if link.Attrs().MasterIndex != 0 {
				m.slaveAttrs, m.attrsOK = bonding.ParseSlaveAttrs(msg)
			}
		}
		m.seen = s.decodes
		if b, ok := m.link.(*netlink.Bond); ok {
			bonds = append(bonds, dumpedBond{link: b, attrs: m.bondAttrs, attrsOK: m.attrsOK, memo: m})
			continue
		}
		if m.link.Attrs().MasterIndex != 0 {
			slaves = append(slaves, dumpedSlave{link: m.link, attrs: m.slaveAttrs, attrsOK: m.attrsOK, memo: m})
		}
	}
	s.forget(s.decodes)
	slices.SortFunc(bonds, func(a, b dumpedBond) int { return strings.Compare(a.link.Name, b.link.Name) })
	return bonds, slaves
}

// deserializeLink decodes one message with vishvananda/netlink, turning a
// panic on a malformed attribute (it slices without checking lengths) into
// an error: one odd interface must not take the monitor down.
func deserializeLink(msg []byte) (link netlink.Link, err error) {
	defer func() {
		if p := recover(); p != nil {
			link, err = nil, fmt.Errorf("cannot decode a link message: %v", p)
		}
	}()
	return netlink.LinkDeserialize(nil, msg)
}

// built is bonding.FromNetlinkBond of the dumped link, built once per
// memo and set of slaves (the memo's bondBuilt counts the builds): the
// memo's own bond, which is only read. Without a memo, a new one.
func (db *dumpedBond) built(attrs *bonding.BondAttrs, mine []dumpedSlave) *bonding.Bond {
	slaveName := func(idx int) string {
		for _, sl := range mine {
			if a := sl.link.Attrs(); a.Index == idx {
				return a.Name
			}
		}
		return ""
	}
	m := db.memo
	if m == nil {
		b := bonding.FromNetlinkBond(db.link, attrs, slaveName)
		return &b
	}
	if !m.bondOK || !sameSlaves(m.bondSlaves, mine) {
		m.bond, m.bondOK = bonding.FromNetlinkBond(db.link, attrs, slaveName), true
		m.bondBuilt++
		m.bondSlaves = m.bondSlaves[:0]
		for _, sl := range mine {
			m.bondSlaves = append(m.bondSlaves, slaveRef{sl.link.Attrs().Index, sl.link.Attrs().Name})
		}
	}
	return &m.bond
}

// bond is built's bond with the new counters: an unchanged bond comes
// back without decoding. Its LACP is a copy: merging procfs and sysfs
// fills in its other fields.
func (db *dumpedBond) bond(attrs *bonding.BondAttrs, mine []dumpedSlave) bonding.Bond {
	out := *db.built(attrs, mine)
	out.Counters = bonding.NetlinkCounters(db.link.Attrs())
	if out.LACP != nil {
		l := *out.LACP
		out.LACP = &l
	}
	return out
}

// slave is bonding.FromNetlinkSlave of the dumped link, built once per
// memo: an unchanged link's slave comes back with the new counters. Its
// port states are copies: merging procfs and sysfs fills in their other
// fields (bonding.Merge), which must not stick to the memo.
func (sl *dumpedSlave) slave(sa *bonding.SlaveAttrs) bonding.Slave {
	if sl.memo == nil {
		return bonding.FromNetlinkSlave(sl.link, sa)
	}
	m := sl.memo
	if !m.slaveOK {
		m.slave, m.slaveOK = bonding.FromNetlinkSlave(sl.link, sa), true
	}
	out := m.slave
	out.Counters = bonding.NetlinkCounters(sl.link.Attrs())
	if out.Actor != nil || out.Partner != nil {
		ports := new(struct {
			actor   bonding.ActorPort
			partner bonding.PartnerPort
		})
		if out.Actor != nil {
			ports.actor, out.Actor = *out.Actor, &ports.actor
		}
		if out.Partner != nil {
			ports.partner, out.Partner = *out.Partner, &ports.partner
		}
	}
	return out
}

// readBond builds one bond: netlink from this dump, then procfs, then
// sysfs, each only filling what the ones before lacked.
func (s *Source) readBond(r *collector.Reading, db *dumpedBond, all []dumpedSlave, gen uint64, now time.Time) bonding.Bond {
	link := db.link
	name := link.Name
	mine := s.mineBuf[:0]
	for _, sl := range all {
		if sl.link.Attrs().MasterIndex == link.Index {
			mine = append(mine, sl)
		}
	}
	s.mineBuf = mine
	var attrs *bonding.BondAttrs
	if db.attrsOK {
		attrs = &db.attrs
	}
	is8023AD := db.built(attrs, mine).Is8023AD()
	// noAggregator names the 802.3ad slaves that netlink says have no
	// aggregator (it would have sent the id): what a file cached earlier
	// said about their aggregator and ports no longer holds.
	noAggregator := s.noAggBuf[:0]
	for _, sl := range mine {
		if sa := &sl.attrs; sl.attrsOK && is8023AD && sa.AuthoritativeAggregator() && !sa.Has(unix.IFLA_BOND_SLAVE_AD_AGGREGATOR_ID) {
			noAggregator = append(noAggregator, sl.link.Attrs().Name)
		}
	}
	s.noAggBuf = noAggregator

	c := s.cache[name]
	if c == nil || c.index != link.Index {
		if c != nil {
			c.procRead.close()
		}
		c = &liveBond{index: link.Index}
		s.cache[name] = c
	}
	// What to re-read. A link notification (failover, carrier, enslave,
	// options) must be answered fast, and a kernel that puts every option
	// in the dump answers most of it there: then only the ethtool modes of
	// slaves whose link changed are queried again (and procfs, where it is
	// read anyway or ethtool is missing). sysfs, about 40 files (50-300 ms
	// under the lab's emulated CPU, against 10-40 ms for a whole Read),
	// waits for the slow timer, a changed slave set, or a kernel whose dump
	// lacks options.
	notified := c.gen != gen
	timer := c.readAt.IsZero() || now.Sub(c.readAt) >= s.refresh
	moved := !sameDumpedSet(mine, c.order(false)) && (notified || now.Sub(c.checkedAt) >= liveOrderRecheck)
	// Partner details and churn change without a notification.
	lacp := is8023AD || c.sysfs.Bond.Is8023AD()
	procFresh := true
	switch {
	case timer || moved || notified && (attrs == nil || !attrs.CarriesOptions()):
		s.refreshConfig(c, name, mine, gen, now)
	case notified:
		c.gen = gen
		if lacp || s.eth == nil {
			s.readProc(c, name)
		} else {
			procFresh = false
		}
		s.readEthtool(c, mine, false)
	case lacp:
		s.readProc(c, name)
	default:
		procFresh = false
	}

	b, reused := c.merged.again(db, mine, c, procFresh, &s.arrays)
	if !reused {
		b = s.merge(c, db, attrs, mine, procFresh, noAggregator)
	}

	r.Warnings = append(r.Warnings, c.sysfs.Warnings...)
	if c.procWarn != "" {
		r.Warnings = append(r.Warnings, c.procWarn)
	}
	for _, e := range c.speeds {
		if e.warn != "" {
			r.Warnings = append(r.Warnings, e.warn)
		}
	}
	if c.sysfs.Hidden > 0 {
		// capable() is checked in the initial user namespace: a
		// container's CAP_NET_ADMIN does not count.
		r.Unprivileged = true
	}
	return b
}

// merge builds the bond from the dump's link (netlink), and fills in
// what it lacks from procfs, then sysfs; the bond is kept as c.merged,
// for the next ticks whose inputs are the same.
func (s *Source) merge(c *liveBond, db *dumpedBond, attrs *bonding.BondAttrs, mine []dumpedSlave, procFresh bool, noAggregator []string) bonding.Bond {
	b := db.bond(attrs, mine)
	b.Slaves = make([]bonding.Slave, 0, len(mine))
	for _, sl := range mine {
		var sa *bonding.SlaveAttrs
		if sl.attrsOK {
			sa = &sl.attrs
		}
		b.Slaves = append(b.Slaves, sl.slave(sa))
	}
	for i := range b.Slaves {
		sl := &b.Slaves[i]
		for _, sp := range c.speeds {
			if sp.name == sl.Name {
				sl.SpeedMbps, sl.Duplex = sp.speed, sp.duplex
			}
		}
	}
	orderSlaves(b.Slaves, c.order(procFresh))

	if c.proc != nil {
		bonding.Merge(&b, c.procTrusted.of(&b, c.proc, c.procGen, attrs, noAggregator))
	}
	bonding.Merge(&b, c.sysfsTrusted.of(&b, &c.sysfs.Bond, c.sysfsGen, attrs, noAggregator))
	c.merged.keep(b, db, mine, c, procFresh)
	return b
}

// dropBonds forgets the cached bonds that gone says are gone, closing
// their files.
func (s *Source) dropBonds(gone func(name string) bool) {
	for name, c := range s.cache {
		if gone(name) {
			c.procRead.close()
			delete(s.cache, name)
		}
	}
}

// refreshConfig re-reads everything the cache holds for one bond.
func (s *Source) refreshConfig(c *liveBond, name string, slaves []dumpedSlave, gen uint64, now time.Time) {
	c.gen, c.readAt, c.checkedAt = gen, now, now
	c.sysfs = bonding.ReadSysfs(s.fsys, name)
	c.sysfsGen++
	s.readProc(c, name)
	s.readEthtool(c, slaves, true)
}

// readEthtool queries the link modes of the slaves: all of them, or only
// those whose link (operstate, up, carrier) changed since their last
// query. One LINKMODES_GET costs about 120 µs on a veth here and can take
// milliseconds where the driver asks the NIC firmware: never every Read.
func (s *Source) readEthtool(c *liveBond, slaves []dumpedSlave, all bool) {
	if s.eth == nil {
		c.speeds = c.speeds[:0]
		return
	}
	fresh := make([]ethSpeed, 0, len(slaves))
	for _, sl := range slaves {
		a := sl.link.Attrs()
		key := linkKey(a)
		if !all {
			if i := slices.IndexFunc(c.speeds, func(e ethSpeed) bool { return e.index == a.Index && e.name == a.Name }); i >= 0 && c.speeds[i].key == key {
				fresh = append(fresh, c.speeds[i])
				continue
			}
		}
		e := ethSpeed{name: a.Name, index: a.Index, key: key}
		lm, err := s.eth.LinkMode(ethtool.Interface{Index: a.Index})
		switch {
		case err == nil:
			e.speed, e.duplex = bonding.FromEthtoolLinkMode(lm)
		case errors.Is(err, os.ErrNotExist):
			// The driver has no link settings (or the slave just
			// left): procfs and sysfs speed and duplex stand in.
		default:
			e.warn = fmt.Sprintf("ethtool %s: %v", a.Name, err)
		}
		fresh = append(fresh, e)
	}
	c.speeds = fresh
	c.speedsGen++
}

// linkKey is what of a link's state may change its speed and duplex.
func linkKey(a *netlink.LinkAttrs) uint64 {
	return uint64(a.OperState)<<32 | uint64(a.RawFlags&(unix.IFF_UP|unix.IFF_LOWER_UP))
}

// readProc reads /proc/net/bonding/<name> into the cache, and parses it
// when it says something else than last time.
func (s *Source) readProc(c *liveBond, name string) {
	if c.procFile == "" {
		c.procFile = path.Join(bonding.ProcNetBonding, name)
	}
	file := c.procFile
	data, err := c.procRead.read(s.fsys, file)
	if err == nil && c.procText != nil && bytes.Equal(data, c.procText) {
		return // the bond and the warnings parsed from this text
	}
	c.proc, c.procWarn, c.procText = nil, "", nil
	c.procGen++
	switch {
	case err == nil:
		c.procText = bytes.Clone(data) // data is the reader's buffer
		p, notes, err := bonding.ParseProcReport(name, c.procText)
		if err != nil {
			c.procWarn = err.Error() // names the file
			return
		}
		c.proc = &p
		if w := hostfiles.GarbledWarnings("/"+file, notes.Garbled); len(w) > 0 {
			c.procWarn = strings.Join(w, "; ")
		}
	case errors.Is(err, fs.ErrNotExist):
		// The bond went away after the dump, or /proc is another
		// namespace's: netlink and sysfs still tell most.
	default:
		c.procWarn = fmt.Sprintf("/%s: %v", file, err)
	}
}

// order is the kernel's enslave order as last seen: procfs when it was
// read in this Read, else sysfs bonding/slaves, else an older procfs.
func (c *liveBond) order(procFresh bool) []bonding.Slave {
	if procFresh && c.proc != nil && len(c.proc.Slaves) > 0 {
		return c.proc.Slaves
	}
	if len(c.sysfs.Bond.Slaves) > 0 {
		return c.sysfs.Bond.Slaves
	}
	if c.proc != nil {
		return c.proc.Slaves
	}
	return nil
}

// sameDumpedSet reports whether the dump's slaves and a cached list name
// the same interfaces.
func sameDumpedSet(got []dumpedSlave, cached []bonding.Slave) bool {
	if len(got) != len(cached) {
		return false
	}
	for i := range got {
		name := got[i].link.Attrs().Name
		if !slices.ContainsFunc(cached, func(c bonding.Slave) bool { return c.Name == name }) {
			return false
		}
	}
	return true
}

// mergedBond is the bond merge built last for one cached bond, with what
// it was built from. A tick whose every input is the same (the same link
// memos, built as before; the same procfs and sysfs generations and
// ethtool read; procfs read or not, which decides the slaves' order)
// would build the same bond but for the counters: it gets this one again
// with the dump's counters, and the bond's and slaves' pointees are
// shared with the readings (and snapshots) before, which is safe as
// nothing writes into a bond once built (Merge writes only into the one
// merge is building). A tick saves copying them, and merging.
type mergedBond struct {
	ok         bool
	bond       bonding.Bond
	bondMemo   *linkMemo
	bondBuilt  uint64
	slaveMemos []*linkMemo // the dump's slaves' memos, in the dump's order
	// links are the link attributes of bond.Slaves, in their order: the
	// memos' own, whose counters each dump updates in place.
	links                        []*netlink.LinkAttrs
	procGen, sysfsGen, speedsGen uint64
	procFresh                    bool
}

// keep remembers b as the bond built from db and mine.
func (mb *mergedBond) keep(b bonding.Bond, db *dumpedBond, mine []dumpedSlave, c *liveBond, procFresh bool) {
	mb.ok = db.memo != nil && !b.Counters.Empty()
	mb.links = mb.links[:0]
	for i := range b.Slaves {
		if !mb.ok {
			break
		}
		j := slices.IndexFunc(mine, func(sl dumpedSlave) bool { return sl.link.Attrs().Name == b.Slaves[i].Name })
		// A slave of the files only, or without counters of its own in
		// the dump (then Merge took the files'), is merged every tick.
		if j < 0 || mine[j].memo == nil || mine[j].link.Attrs().Statistics == nil || b.Slaves[i].Counters.Empty() {
			mb.ok = false
			break
		}
		mb.links = append(mb.links, mine[j].link.Attrs())
	}
	if !mb.ok || db.link.Attrs().Statistics == nil {
		mb.ok = false
		return
	}
	mb.bond, mb.bondMemo, mb.bondBuilt = b, db.memo, db.memo.bondBuilt
	mb.slaveMemos = mb.slaveMemos[:0]
	for _, sl := range mine {
		mb.slaveMemos = append(mb.slaveMemos, sl.memo)
	}
	mb.procGen, mb.sysfsGen, mb.speedsGen, mb.procFresh = c.procGen, c.sysfsGen, c.speedsGen, procFresh
}

// again returns the kept bond with the dump's counters when db and mine
// are what it was built from, and c's files and ethtool reads too. Its
// slaves are copied into an array from arrays (one a Sampler handed back,
// or a new one): the kept bond's own array, which the reading it was
// merged for holds too, is never written.
func (mb *mergedBond) again(db *dumpedBond, mine []dumpedSlave, c *liveBond, procFresh bool, arrays *recycle.Arrays) (bonding.Bond, bool) {
	if !mb.ok || db.memo != mb.bondMemo || db.memo.bondBuilt != mb.bondBuilt || len(mine) != len(mb.slaveMemos) ||
		c.procGen != mb.procGen || c.sysfsGen != mb.sysfsGen || c.speedsGen != mb.speedsGen || procFresh != mb.procFresh {
		return bonding.Bond{}, false
	}
	for i := range mine {
		if mine[i].memo != mb.slaveMemos[i] {
			return bonding.Bond{}, false
		}
	}
	b := mb.bond
	b.Counters = bonding.NetlinkCounters(db.link.Attrs())
	b.Slaves = arrays.TakeSlaves(mb.bond.Slaves)
	for i := range b.Slaves {
		b.Slaves[i].Counters = bonding.NetlinkCounters(mb.links[i])
	}
	return b, true
}

// orderSlaves sorts the dump's slaves (ifindex order) into the kernel's
// enslave order, which the transmit hash depends on. Slaves the order does
// not know (enslaved since it was read) keep their relative order at the
// end, where the kernel appends new slaves.
func orderSlaves(slaves []bonding.Slave, order []bonding.Slave) {
	rank := func(name string) int {
		for i := range order {
			if order[i].Name == name {
				return i
			}
		}
		return len(order)
	}
	slices.SortStableFunc(slaves, func(a, b bonding.Slave) int { return rank(a.Name) - rank(b.Name) })
}

// trustedCopy is trustNetlink of one cached bond, with what it was made
// from: a steady tick merges the same copy again instead of copying the
// bond and its slaves twice. Merge only reads it.
type trustedCopy struct {
	ok           bool
	gen          uint64   // the cached bond's generation
	active       bool     // netlink's active slave is authoritative
	noActiveAgg  bool     // netlink says there is no active aggregator
	slaves       []string // the netlink bond's slaves
	noAggregator []string
	bond         bonding.Bond
}

// of returns trustNetlink(nb, src, attrs, noAggregator), made anew only
// when src's generation or what it depends on of nb changed.
func (t *trustedCopy) of(nb *bonding.Bond, src *bonding.Bond, gen uint64, attrs *bonding.BondAttrs, noAggregator []string) *bonding.Bond {
	active := attrs != nil && attrs.AuthoritativeActive()
	noActiveAgg := nb.LACP != nil && nb.LACP.NoActiveAggregator
	same := t.ok && t.gen == gen && t.active == active && t.noActiveAgg == noActiveAgg &&
		slices.Equal(t.noAggregator, noAggregator) && len(t.slaves) == len(nb.Slaves)
	for i := 0; same && i < len(nb.Slaves); i++ {
		same = t.slaves[i] == nb.Slaves[i].Name
	}
	if !same {
		t.bond = trustNetlink(nb, src, attrs, noAggregator)
		t.ok, t.gen, t.active, t.noActiveAgg = true, gen, active, noActiveAgg
		t.noAggregator = append(t.noAggregator[:0], noAggregator...)
		t.slaves = t.slaves[:0]
		for i := range nb.Slaves {
			t.slaves = append(t.slaves, nb.Slaves[i].Name)
		}
	}
	return &t.bond
}

// trustNetlink returns a copy of a cached or file-based bond reduced to
// what may fill the netlink one: only the slaves netlink saw (a stale cache
// must not resurrect a released slave), and none of the values whose
// absence netlink states as a fact (no active slave, no active aggregator,
// no aggregator on the slaves named by noAggregator). Shared pointees are
// never modified.
func trustNetlink(nb *bonding.Bond, src *bonding.Bond, attrs *bonding.BondAttrs, noAggregator []string) bonding.Bond {
	out := *src
	if attrs != nil && attrs.AuthoritativeActive() {
		out.ActiveSlave, out.Primary = nil, nil
	}
	if out.LACP != nil {
		l := *out.LACP
		if nb.LACP != nil && nb.LACP.NoActiveAggregator {
			l.AggregatorID, l.NumPorts, l.ActorKey, l.PartnerKey, l.PartnerMAC = nil, nil, nil, nil, nil
		}
		// sysfs ad_aggregator says 0 when there is no active aggregator;
		// aggregator ids count from 1.
		if l.AggregatorID != nil && *l.AggregatorID == 0 {
			l.AggregatorID = nil
		}
		out.LACP = &l
	}
	out.Slaves = make([]bonding.Slave, 0, len(nb.Slaves))
	for _, ss := range src.Slaves {
		if nb.Slave(ss.Name) == nil {
			continue
		}
		if slices.Contains(noAggregator, ss.Name) {
			ss.AggregatorID, ss.Actor, ss.Partner = nil, nil, nil
		}
		out.Slaves = append(out.Slaves, ss)
	}
	return out
}

// driverLoaded reports whether the bonding driver is there at all.
func (s *Source) driverLoaded() bool {
	for _, p := range []string{path.Join(bonding.SysClassNet, "bonding_masters"), bonding.ProcNetBonding} {
		if _, err := fs.Stat(s.fsys, p); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	return false
}

// setWatched records the ifindexes (of bonds and slaves) whose
// notifications matter. The set is replaced only when it changes, so a
// steady Read allocates nothing for it.
func (s *Source) setWatched(idx []int) {
	if slices.Equal(idx, s.watchedIdx) && s.watched.Load() != nil {
		return
	}
	set := make(map[int]struct{}, len(idx))
	for _, i := range idx {
		set[i] = struct{}{}
	}
	s.watchedIdx = slices.Clone(idx)
	s.watched.Store(&set)
}

// relevant reports whether a link notification may change what Read
// returns: it concerns a bond, a bond's slave, or a link that was one at
// the last Read (a release, a deletion). Other links (container veths
// coming and going) must not force sysfs re-reads.
func (s *Source) relevant(u netlink.LinkUpdate) bool {
	if u.Link == nil {
		return true
	}
	if _, ok := u.Link.(*netlink.Bond); ok {
		return true
	}
	a := u.Link.Attrs()
	if _, ok := a.Slave.(*netlink.BondSlave); ok {
		return true
	}
	if w := s.watched.Load(); w != nil {
		if _, ok := (*w)[a.Index]; ok {
			return true
		}
		if _, ok := (*w)[a.MasterIndex]; ok && a.MasterIndex != 0 {
			return true
		}
	}
	return false
}

// changed marks every cached bond stale and wakes the sampler.
func (s *Source) changed() {
	s.gen.Add(1)
	select {
	case s.changes <- struct{}{}:
	default:
	}
}

// subscribe opens an RTNLGRP_LINK subscription. The returned done channel
// ends it. When other is set (a resubscription from the watch goroutine,
// whose thread may sit in another namespace than New's caller),
// the socket is opened in the watched namespace.
func (s *Source) subscribe(other bool) (chan netlink.LinkUpdate, chan struct{}, error) {
	ch := make(chan netlink.LinkUpdate, 64)
	done := make(chan struct{})
	opts := netlink.LinkSubscribeOptions{}
	if other && s.ns.IsOpen() && !inNetns(s.ns) {
		opts.Namespace = &s.ns
	}
	if err := netlink.LinkSubscribeWithOptions(ch, done, opts); err != nil {
		close(done)
		return nil, nil, err
	}
	return ch, done, nil
}

// inNetns reports whether the calling thread is in the namespace ns.
func inNetns(ns netns.NsHandle) bool {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cur, err := netns.Get()
	if err != nil {
		return true
	}
	defer cur.Close()
	return cur.Equal(ns)
}

// watch turns link notifications into Changes until Close. The library's
// reader goroutine ends by closing ch; watch always drains ch to that point
// so the reader never blocks on a send and nothing outlives Close.
func (s *Source) watch(ch chan netlink.LinkUpdate, subDone chan struct{}) {
	defer s.wg.Done()
	for {
		select {
		case u, ok := <-ch:
			if ok {
				if s.relevant(u) {
					s.changed()
				}
				continue
			}
			// The subscription died: ENOBUFS after a burst of
			// notifications overflowed the socket, or a socket error.
			// Changes may have been missed; resubscribe.
			close(subDone)
			s.changed()
			if ch, subDone = s.resubscribe(); ch == nil {
				return
			}
		case <-s.done:
			close(subDone)
			for range ch {
			}
			return
		}
	}
}

// resubscribe retries the subscription with a growing pause until it
// works or the source is closed (then it returns nil channels).
func (s *Source) resubscribe() (chan netlink.LinkUpdate, chan struct{}) {
	pause := 100 * time.Millisecond
	for {
		select {
		case <-s.done:
			return nil, nil
		case <-time.After(pause):
		}
		if ch, done, err := s.subscribe(true); err == nil {
			s.changed() // whatever happened while unsubscribed
			return ch, done
		}
		pause = min(2*pause, 5*time.Second)
	}
}

// hasCapNetAdmin reports whether the process has CAP_NET_ADMIN in its
// effective set: without it the kernel hides LACP system and partner
// details in procfs, sysfs and netlink.
func hasCapNetAdmin() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	const c = unix.CAP_NET_ADMIN
	return data[c/32].Effective&(1<<(c%32)) != 0
}
