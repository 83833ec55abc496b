package collector

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"time"

	"github.com/bondtop/bondtop/bonding"
)

// configRefresh is how often the root source re-reads sysfs configuration
// when /proc/net/bonding did not change: sysfs holds little procfs lacks
// (slave state, MTU, operstate), and each file costs a syscall round.
const configRefresh = 5 * time.Second

// RootSource reads a copy of a host's /proc and /sys under a directory
// (DIR/proc/net/bonding/*, DIR/sys/class/net/...): a support bundle from
// another host, a lab capture, or a test tree whose files change. Files are
// re-read every Read, so a changing tree behaves like a live host.
type RootSource struct {
	dir    string
	fsys   *rootFS
	clock  func() time.Time
	config map[string]*rootConfig // by bond name
}

// rootConfig caches what sysfs said about a bond and the procfs text it
// was read next to.
type rootConfig struct {
	proc   []byte
	sysfs  bonding.SysfsResult
	readAt time.Time
	// noStatistics names the bond's interfaces without a statistics/
	// directory, so their counters come from /proc/net/dev without
	// probing ten absent files every tick.
	noStatistics map[string]bool
}

// NewRootSource checks that dir exists and returns a source over it. The
// tree is read as untrusted input (see rootFS): nothing outside dir, no
// FIFOs or devices, no file larger than maxTreeFile.
func NewRootSource(dir string) (*RootSource, error) {
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
	return &RootSource{dir: dir, fsys: fsys, clock: time.Now, config: make(map[string]*rootConfig)}, nil
}

// Close releases the tree's directory.
func (s *RootSource) Close() error { return s.fsys.Close() }

// Read implements Source.
func (s *RootSource) Read() (Reading, error) {
	names, err := bonding.ListBonds(s.fsys)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Reading{}, fmt.Errorf("%s: %w", s.dir, ErrNoBonding)
		}
		return Reading{}, err
	}
	var r Reading
	netDev, haveNetDev := s.readNetDev(&r)
	for _, name := range names {
		b, ok := s.readBond(&r, name)
		if !ok {
			continue
		}
		s.readCounters(&r, &b, s.config[name].noStatistics, netDev, haveNetDev)
		r.Bonds = append(r.Bonds, b)
	}
	for name := range s.config {
		if r.Bond(name) == nil {
			delete(s.config, name)
		}
	}
	return r, nil
}

// readBond merges procfs (most detail) with sysfs (state, MTU, operstate;
// root-only LACP fields when procfs came from a non-root reader). ok is
// false when the bond vanished between listing and reading.
func (s *RootSource) readBond(r *Reading, name string) (bonding.Bond, bool) {
	procFile := path.Join(bonding.ProcNetBonding, name)
	proc, perr := fs.ReadFile(s.fsys, procFile)
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
			r.Warnings = append(r.Warnings, garbledWarnings("/"+procFile, notes.Garbled)...)
		}
	case errors.Is(perr, fs.ErrNotExist):
		b = bonding.Bond{Name: name}
	default:
		r.Warnings = append(r.Warnings, fmt.Sprintf("/%s: %v", procFile, perr))
		b = bonding.Bond{Name: name}
	}

	now := s.clock()
	cfg := s.config[name]
	if cfg == nil || !bytes.Equal(cfg.proc, proc) || now.Sub(cfg.readAt) >= configRefresh {
		cfg = &rootConfig{proc: proc, sysfs: bonding.ReadSysfs(s.fsys, name), readAt: now}
		cfg.noStatistics = s.probeStatistics(name, &cfg.sysfs.Bond, b.Slaves)
		s.config[name] = cfg
	}
	sys := cfg.sysfs
	r.Warnings = append(r.Warnings, sys.Warnings...)
	sysExists := sys.Bond.Mode != nil || len(sys.Bond.Slaves) > 0
	if !procOK && !sysExists {
		if errors.Is(perr, fs.ErrNotExist) {
			return b, false
		}
	}
	if (procOK && procHidesRootOnly(&b)) || sys.Hidden > 0 {
		r.Unprivileged = true
	}
	sysBond := sys.Bond
	bonding.Merge(&b, &sysBond)
	return b, true
}

// probeStatistics lists the interfaces of a bond (from procfs or sysfs)
// that have no statistics/ directory in the tree.
func (s *RootSource) probeStatistics(bond string, sys *bonding.Bond, procSlaves []bonding.Slave) map[string]bool {
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
func (s *RootSource) readNetDev(r *Reading) (map[string]bonding.Counters, bool) {
	data, err := fs.ReadFile(s.fsys, bonding.ProcNetDev)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.Warnings = append(r.Warnings, fmt.Sprintf("/%s: %v", bonding.ProcNetDev, err))
		}
		return nil, false
	}
	m, warnings := bonding.ParseNetDev(data)
	r.Warnings = append(r.Warnings, capWarnings("/"+bonding.ProcNetDev, warnings)...)
	return m, true
}

// readCounters fills the bond's and its slaves' counters from
// statistics/ (exact, like the kernel's own files), else /proc/net/dev.
func (s *RootSource) readCounters(r *Reading, b *bonding.Bond, noStatistics map[string]bool, netDev map[string]bonding.Counters, haveNetDev bool) {
	read := func(ifname string) bonding.Counters {
		if noStatistics[ifname] {
			return netDev[ifname] // zero Counters (all absent) when not there
		}
		cs, warnings := bonding.ReadStatistics(s.fsys, ifname)
		r.Warnings = append(r.Warnings, warnings...)
		if cs.Empty() && haveNetDev {
			cs = netDev[ifname]
		}
		return cs
	}
	b.Counters = read(b.Name)
	for i := range b.Slaves {
		b.Slaves[i].Counters = read(b.Slaves[i].Name)
	}
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

// maxWarningsPerFile bounds the warnings one file adds to a reading: a
// file of thousands of garbled lines says so in a few lines, not in
// thousands every tick.
const maxWarningsPerFile = 5

// garbledWarnings turns the garbled lines of a procfs file into warnings
// that name the file; the fields those lines held are nil.
func garbledWarnings(file string, garbled []string) []string {
	if len(garbled) == 0 {
		return nil
	}
	out := make([]string, 0, min(len(garbled), maxWarningsPerFile+1))
	for _, line := range garbled[:min(len(garbled), maxWarningsPerFile)] {
		out = append(out, fmt.Sprintf("%s: cannot parse %q (that field is left empty)", file, line))
	}
	return append(out, moreWarnings(file, len(garbled))...)
}

// capWarnings keeps the first maxWarningsPerFile warnings about file and
// counts the rest.
func capWarnings(file string, ws []string) []string {
	if len(ws) <= maxWarningsPerFile {
		return ws
	}
	return append(ws[:maxWarningsPerFile:maxWarningsPerFile], moreWarnings(file, len(ws))...)
}

// moreWarnings is the line that stands for the warnings past the cap.
func moreWarnings(file string, n int) []string {
	if n <= maxWarningsPerFile {
		return nil
	}
	return []string{fmt.Sprintf("%s: %d more lines like these (not shown)", file, n-maxWarningsPerFile)}
}
