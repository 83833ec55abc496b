// Package rootdir is the --root source: a copy of a host's /proc and /sys
// under a directory (a support bundle, a lab capture, a test tree whose
// files change), read as the live host would be and as untrusted input
// (rootfs.go: nothing outside the tree, no FIFOs or devices, no huge
// files). It implements collector.Source and the capabilities its files
// can answer: HostReader, ConfigReader and Recycler.
package rootdir

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/internal/hostfiles"
	"github.com/bondtop/bondtop/collector/internal/recycle"
	"github.com/bondtop/bondtop/model"
)

// configRefresh is how often the root source re-reads sysfs configuration
// when /proc/net/bonding did not change: sysfs holds little procfs lacks
// (slave state, MTU, operstate), and each file costs a syscall round.
const configRefresh = 5 * time.Second

// Source reads a copy of a host's /proc and /sys under a directory
// (DIR/proc/net/bonding/*, DIR/sys/class/net/...): a support bundle from
// another host, a lab capture, or a test tree whose files change. Files are
// re-read every Read, so a changing tree behaves like a live host.
type Source struct {
	dir    string
	fsys   *rootFS
	clock  func() time.Time
	config map[string]*rootConfig // by bond name
	// masters is the text of bonding_masters and names the bonds it
	// lists, kept while the file says the same.
	masters []byte
	names   []string
	// stats names each interface's statistics files, kept while the
	// interface is read: a tick would otherwise join ten paths per
	// interface. seen is the Read that last used an entry.
	stats map[string]*statFiles
	reads uint64
	// arrays are the readings the Sampler handed back (Recycle).
	arrays recycle.Arrays
}

// Recycle implements collector.Recycler: it takes back a reading's
// arrays for the next Read, so a Sampler's steady tick over an unchanged
// tree allocates no reading.
func (s *Source) Recycle(bonds []bonding.Bond) { s.arrays.Put(bonds) }

// statFiles are one interface's statistics files and the Read that last
// used them.
type statFiles struct {
	files [bonding.NumCounters]string
	seen  uint64
}

// rootConfig caches what sysfs said about a bond and the procfs text it
// was read next to.
type rootConfig struct {
	proc     []byte
	sysfs    bonding.SysfsResult
	readAt   time.Time
	procFile string // proc/net/bonding/<bond>
	// merged is the bond procfs and sysfs made, with the warnings and
	// privilege the reading found, while proc is the text read; nil
	// when procfs could not be read.
	merged       *bonding.Bond
	warnings     []string
	unprivileged bool
	// noStatistics names the bond's interfaces without a statistics/
	// directory, so their counters come from /proc/net/dev without
	// probing ten absent files every tick.
	noStatistics map[string]bool
}

// New checks that dir exists and returns a source over it. The
// tree is read as untrusted input (see rootFS): nothing outside dir, no
// FIFOs or devices, no file larger than maxTreeFile.
func New(dir string) (*Source, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("--root %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("--root %s: not a directory", dir)
	}
	fsys, err := openRootFS(dir)
	if err != nil {
		return nil, fmt.Errorf("--root %s: %w", dir, err)
	}
	return &Source{dir: dir, fsys: fsys, clock: time.Now, config: make(map[string]*rootConfig), stats: make(map[string]*statFiles)}, nil
}

// Close releases the tree's directory.
func (s *Source) Close() error { return s.fsys.Close() }

// Read implements collector.Source.
func (s *Source) Read() (collector.Reading, error) {
	names, err := s.listBonds()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return collector.Reading{}, fmt.Errorf("%s: %w", s.dir, collector.ErrNoBonding)
		}
		return collector.Reading{}, err
	}
	s.reads++
	r := collector.Reading{Bonds: s.arrays.TakeBonds(len(names))}
	netDev := lazyNetDev{s: s, r: &r}
	for _, name := range names {
		b, ok := s.readBond(&r, name)
		if !ok {
			continue
		}
		s.readCounters(&r, &b, s.config[name].noStatistics, &netDev)
		r.Bonds = append(r.Bonds, b)
	}
	for name := range s.config {
		if r.Bond(name) == nil {
			delete(s.config, name)
		}
	}
	for ifname, sf := range s.stats {
		if sf.seen != s.reads {
			delete(s.stats, ifname)
		}
	}
	s.fsys.sweepKept(s.reads)
	return r, nil
}

// listBonds is bonding.ListBonds, whose names are parsed again only
// when bonding_masters changed: from tick to tick they are the same
// strings. A tree without bonding_masters is listed every tick.
func (s *Source) listBonds() ([]string, error) {
	data, err := s.fsys.ReadFileScratch(bonding.SysClassNet + "/bonding_masters")
	if err != nil {
		s.masters, s.names = nil, nil
		return bonding.ListBonds(s.fsys)
	}
	if s.names == nil || !bytes.Equal(data, s.masters) {
		s.masters = bytes.Clone(data)
		s.names = strings.Fields(string(s.masters))
		sort.Strings(s.names)
	}
	return s.names, nil
}

// readBond merges procfs (most detail) with sysfs (state, MTU, operstate;
// root-only LACP fields when procfs came from a non-root reader). ok is
// false when the bond vanished between listing and reading. While the
// procfs text stays the same and sysfs is not due again, the bond merged
// last time is handed out again (its slaves copied: counters are written
// into them): parsing the same text would only make the same values anew.
func (s *Source) readBond(r *collector.Reading, name string) (bonding.Bond, bool) {
	now := s.clock()
	cfg := s.config[name]
	var procFile string
	if cfg != nil {
		procFile = cfg.procFile
	} else {
		procFile = path.Join(bonding.ProcNetBonding, name)
	}
	data, perr := s.fsys.ReadFileScratch(procFile)
	if perr == nil && cfg != nil && cfg.merged != nil && bytes.Equal(cfg.proc, data) && now.Sub(cfg.readAt) < configRefresh {
		return cfg.reuse(r, &s.arrays), true
	}
	var proc []byte
	if perr == nil {
		proc = bytes.Clone(data)
	}
	firstWarning := len(r.Warnings)
	var b bonding.Bond
	procOK := false
	switch {
	case perr == nil:
		parsed, notes, err := bonding.ParseProcReport(name, proc)
		if err != nil {
			r.Warnings = append(r.Warnings, err.Error()) // names the file
			b = bonding.Bond{Name: name}
		} else {
			b, procOK = parsed, true
			r.Warnings = append(r.Warnings, hostfiles.GarbledWarnings("/"+procFile, notes.Garbled)...)
		}
	case errors.Is(perr, fs.ErrNotExist):
		b = bonding.Bond{Name: name}
	default:
		r.Warnings = append(r.Warnings, fmt.Sprintf("/%s: %v", procFile, perr))
		b = bonding.Bond{Name: name}
	}

	if cfg == nil || !bytes.Equal(cfg.proc, proc) || now.Sub(cfg.readAt) >= configRefresh {
		cfg = &rootConfig{proc: proc, procFile: procFile, sysfs: bonding.ReadSysfs(s.fsys, name), readAt: now}
		cfg.noStatistics = s.probeStatistics(name, &cfg.sysfs.Bond, b.Slaves)
		s.config[name] = cfg
	}
	cfg.merged = nil
	sys := cfg.sysfs
	r.Warnings = append(r.Warnings, sys.Warnings...)
	sysExists := sys.Bond.Mode != nil || len(sys.Bond.Slaves) > 0
	if !procOK && !sysExists {
		if errors.Is(perr, fs.ErrNotExist) {
			return b, false
		}
	}
	unprivileged := (procOK && procHidesRootOnly(&b)) || sys.Hidden > 0
	r.Unprivileged = r.Unprivileged || unprivileged
	sysBond := sys.Bond
	bonding.Merge(&b, &sysBond)
	if perr == nil {
		merged := b
		merged.Slaves = slices.Clone(b.Slaves)
		cfg.merged, cfg.unprivileged = &merged, unprivileged
		cfg.warnings = slices.Clone(r.Warnings[firstWarning:])
	}
	return b, true
}

// reuse hands out the bond merged last time, with what reading it said;
// its slaves are copied into an array from arrays (the counters are
// written into them).
func (cfg *rootConfig) reuse(r *collector.Reading, arrays *recycle.Arrays) bonding.Bond {
	b := *cfg.merged
	b.Slaves = arrays.TakeSlaves(b.Slaves)
	r.Warnings = append(r.Warnings, cfg.warnings...)
	r.Unprivileged = r.Unprivileged || cfg.unprivileged
	return b
}

// probeStatistics lists the interfaces of a bond (from procfs or sysfs)
// that have no statistics/ directory in the tree.
func (s *Source) probeStatistics(bond string, sys *bonding.Bond, procSlaves []bonding.Slave) map[string]bool {
	missing := make(map[string]bool)
	probe := func(ifname string) {
		if _, err := fs.Stat(s.fsys, path.Join(bonding.SysClassNet, ifname, "statistics")); err != nil {
			missing[ifname] = true
		}
	}
	probe(bond)
	for i := range sys.Slaves {
		probe(sys.Slaves[i].Name)
	}
	for i := range procSlaves {
		probe(procSlaves[i].Name)
	}
	return missing
}

// readNetDev reads DIR/proc/net/dev, the fallback for trees without
// statistics/ directories.
func (s *Source) readNetDev(r *collector.Reading) (map[string]bonding.Counters, bool) {
	data, err := s.fsys.ReadFileScratch(bonding.ProcNetDev)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.Warnings = append(r.Warnings, fmt.Sprintf("/%s: %v", bonding.ProcNetDev, err))
		}
		return nil, false
	}
	m, warnings := bonding.ParseNetDev(data)
	r.Warnings = append(r.Warnings, hostfiles.CapWarnings("/"+bonding.ProcNetDev, warnings)...)
	return m, true
}

// lazyNetDev reads DIR/proc/net/dev once in a Read, when an interface
// first needs it: most trees, like the live host, have every statistics
// directory, and the file lists every interface of the host (hundreds on
// a host of containers or VMs), so reading it on every tick for nothing
// was a file and a parse a tick.
type lazyNetDev struct {
	s        *Source
	r        *collector.Reading
	read, ok bool
	counters map[string]bonding.Counters
}

// get returns the file's counters by interface, and false when the tree
// has no readable /proc/net/dev.
func (l *lazyNetDev) get() (map[string]bonding.Counters, bool) {
	if !l.read {
		l.read = true
		l.counters, l.ok = l.s.readNetDev(l.r)
	}
	return l.counters, l.ok
}

// readCounters fills the bond's and its slaves' counters from
// statistics/ (exact, like the kernel's own files), else /proc/net/dev.
func (s *Source) readCounters(r *collector.Reading, b *bonding.Bond, noStatistics map[string]bool, netDev *lazyNetDev) {
	read := func(ifname string) bonding.Counters {
		if noStatistics[ifname] {
			m, _ := netDev.get()
			return m[ifname] // zero Counters (all absent) when not there
		}
		files := s.statFiles(ifname)
		s.fsys.keepDir(path.Dir(files[0]), s.reads)
		cs, warnings := bonding.ReadStatisticsFiles(files, s.fsys.ReadKeptScratch)
		r.Warnings = append(r.Warnings, warnings...)
		if cs.Empty() {
			if m, ok := netDev.get(); ok {
				cs = m[ifname]
			}
		}
		return cs
	}
	b.Counters = read(b.Name)
	for i := range b.Slaves {
		b.Slaves[i].Counters = read(b.Slaves[i].Name)
	}
}

// statFiles names ifname's statistics files, kept from the last Read.
func (s *Source) statFiles(ifname string) *[bonding.NumCounters]string {
	sf := s.stats[ifname]
	if sf == nil {
		sf = &statFiles{files: bonding.StatisticsFiles(ifname)}
		s.stats[ifname] = sf
	}
	sf.seen = s.reads
	return &sf.files
}

// procHidesRootOnly reports an 802.3ad procfs text written for a reader
// without CAP_NET_ADMIN: the kernel then omits the system lines and the
// active aggregator block, both of which every driver version prints for
// root. Call it before sysfs is merged in (sysfs gives the aggregator id to
// everyone).
func procHidesRootOnly(b *bonding.Bond) bool {
	if !b.Is8023AD() || b.LACP == nil {
		return false
	}
	l := b.LACP
	return l.SystemMAC == nil && l.AggregatorID == nil && !l.NoActiveAggregator
}

// ReadHost reads DIR/proc/sys.
func (s *Source) ReadHost() model.Host { return hostfiles.ReadHost(s.fsys) }

// ReadConfig reads DIR/etc and DIR/sys through the tree's guarded file
// system, on the Sampler's goroutine like Read: a bundle's /etc is as
// untrusted as its /sys.
func (s *Source) ReadConfig(bonds []bonding.Bond) *model.HostConfig {
	return hostfiles.ReadConfig(s.fsys, bonds)
}
