package bonding

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// The sysfs and procfs locations, relative to a filesystem root. Readers
// take an fs.FS so the live host (os.DirFS("/")) and a copied support bundle
// (os.DirFS(dir)) go through the same code.
const (
	SysClassNet    = "sys/class/net"
	ProcNetBonding = "proc/net/bonding"
	ProcNetDev     = "proc/net/dev"
	bondingMasters = SysClassNet + "/bonding_masters"
)

// ScratchFS is a file system that can read a file into a buffer of its
// own, valid until its next read: the readers here parse each small file
// at once and keep nothing of its bytes, so over such a file system they
// save a copy per file (a --root tree's reader reuses one buffer).
type ScratchFS interface {
	fs.FS
	ReadFileScratch(name string) ([]byte, error)
}

// readFile is fs.ReadFile, or ReadFileScratch where fsys has it: the
// bytes are for parsing now, not for keeping.
func readFile(fsys fs.FS, name string) ([]byte, error) {
	if s, ok := fsys.(ScratchFS); ok {
		return s.ReadFileScratch(name)
	}
	return fs.ReadFile(fsys, name)
}

// ListBonds names the bonds of a host: bonding_masters when sysfs has it,
// else the files of /proc/net/bonding. It returns fs.ErrNotExist (wrapped)
// when neither exists: the bonding driver is not loaded.
func ListBonds(fsys fs.FS) ([]string, error) {
	data, err := fs.ReadFile(fsys, bondingMasters)
	if err == nil {
		names := strings.Fields(string(data))
		sort.Strings(names)
		return names, nil
	}
	entries, derr := fs.ReadDir(fsys, ProcNetBonding)
	if derr != nil {
		if errors.Is(err, fs.ErrNotExist) && errors.Is(derr, fs.ErrNotExist) {
			return nil, fmt.Errorf("neither %s nor %s: %w", bondingMasters, ProcNetBonding, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("list bonds: %w", derr)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names, nil
}

// SysfsResult is what sysfs said about one bond.
type SysfsResult struct {
	Bond Bond
	// Warnings name files that exist but could not be read or parsed.
	Warnings []string
	// Hidden counts root-only files that were readable but empty, the
	// kernel's way of hiding them from a reader without CAP_NET_ADMIN.
	Hidden int
}

// sysReader reads one directory's attribute files, collecting warnings.
type sysReader struct {
	fsys   fs.FS
	res    *SysfsResult
	exists bool // the last read found the file
	empty  bool // ... and it held only blanks
}

// read returns the trimmed content of file, or "" with r.exists false when
// the file is absent (older kernels lack many attributes: not a warning).
func (r *sysReader) read(file string) string {
	data, err := readFile(r.fsys, file)
	if err != nil {
		r.exists = false
		if !errors.Is(err, fs.ErrNotExist) {
			r.res.Warnings = append(r.res.Warnings, fmt.Sprintf("%s: %v", "/"+file, err))
		}
		return ""
	}
	r.exists = true
	v := string(bytes.TrimSpace(data))
	r.empty = v == ""
	return v
}

// word reads a "name N" attribute (mode, xmit_hash_policy, ...) or a plain
// word, and returns the name; nil when absent, empty or "N/A".
func (r *sysReader) word(file string) *string {
	v := r.read(file)
	if v == "" || v == "N/A" {
		return nil
	}
	if name, _, ok := strings.Cut(v, " "); ok {
		v = name
	}
	return &v
}

// text reads a free-text attribute (a MAC, an interface name).
func (r *sysReader) text(file string) *string {
	v := r.read(file)
	if v == "" || v == "N/A" {
		return nil
	}
	return &v
}

// num reads an integer attribute; "N/A" and absence give nil, garbage a
// warning.
func (r *sysReader) num(file string) *int {
	v := r.read(file)
	if v == "" || v == "N/A" {
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		r.res.Warnings = append(r.res.Warnings, fmt.Sprintf("/%s: not a number: %q", file, truncate(v, 40)))
		return nil
	}
	return &n
}

// rootOnly passes on v, the value of the attribute just read, counting
// it as hidden when the file exists but is empty: the kernel's way of
// withholding root-only values from a reader without CAP_NET_ADMIN.
func rootOnly[T any](r *sysReader, v *T) *T {
	if r.exists && r.empty {
		r.res.Hidden++
	}
	return v
}

// ReadSysfs reads /sys/class/net/<name> and its slaves' bonding_slave
// directories. Absent attributes stay nil (old kernels); unreadable or
// garbled ones stay nil and add a warning naming the file.
func ReadSysfs(fsys fs.FS, name string) SysfsResult {
	res := SysfsResult{Bond: Bond{Name: name}}
	r := &sysReader{fsys: fsys, res: &res}
	dir := path.Join(SysClassNet, name)
	bd := dir + "/bonding/"
	b := &res.Bond

	b.Mode = r.word(bd + "mode")
	b.XmitHashPolicy = r.word(bd + "xmit_hash_policy")
	b.MIIStatus = r.text(bd + "mii_status")
	b.MIIMonMs = r.num(bd + "miimon")
	b.UpDelayMs = r.num(bd + "updelay")
	b.DownDelayMs = r.num(bd + "downdelay")
	b.PeerNotifyMs = r.num(bd + "peer_notif_delay")
	b.ARPIntervalMs = r.num(bd + "arp_interval")
	if t := r.read(bd + "arp_ip_target"); t != "" {
		b.ARPTargets = strings.Fields(t)
	}
	b.Primary = r.text(bd + "primary")
	b.PrimaryReselect = r.word(bd + "primary_reselect")
	b.ActiveSlave = r.text(bd + "active_slave")
	b.FailOverMAC = r.word(bd + "fail_over_mac")
	b.TLBDynamicLB = r.num(bd + "tlb_dynamic_lb")
	b.MTU = r.num(dir + "/mtu")
	b.OperState = r.word(dir + "/operstate")

	// The xmit_hash_policy file exists in every mode; the kernel applies
	// it only where it hashes, and procfs prints it only there. Keep the
	// model's meaning: the policy in force, nil where none is.
	if b.Mode != nil && !ModeHashes(*b.Mode, b.TLBDynamicLB) {
		b.XmitHashPolicy = nil
	}
	if b.Mode != nil && *b.Mode == Mode8023AD {
		b.LACP = readSysfsLACP(r, bd)
	}

	slaves := strings.Fields(r.read(bd + "slaves"))
	for _, s := range slaves {
		b.Slaves = append(b.Slaves, readSysfsSlave(r, s))
	}
	return res
}

func readSysfsLACP(r *sysReader, bd string) *LACP {
	l := &LACP{}
	if v := r.word(bd + "lacp_active"); v != nil {
		on := *v == "on"
		l.Active = &on
	}
	l.Rate = r.word(bd + "lacp_rate")
	l.MinLinks = r.num(bd + "min_links")
	l.ADSelect = r.word(bd + "ad_select")
	l.AggregatorID = nonZero(r.num(bd + "ad_aggregator"))
	l.NumPorts = r.num(bd + "ad_num_ports")
	l.ActorKey = rootOnly(r, r.num(bd+"ad_actor_key"))
	l.PartnerKey = rootOnly(r, r.num(bd+"ad_partner_key"))
	l.SystemPriority = rootOnly(r, r.num(bd+"ad_actor_sys_prio"))
	// ad_actor_system is an override, all zeros unless set; the LACPDUs
	// then carry the bond's own address, as procfs and netlink report.
	l.SystemMAC = rootOnly(r, r.text(bd+"ad_actor_system"))
	if l.SystemMAC != nil && *l.SystemMAC == "00:00:00:00:00:00" {
		l.SystemMAC = r.text(path.Dir(path.Clean(bd)) + "/address")
	}
	l.PartnerMAC = rootOnly(r, r.text(bd+"ad_partner_mac"))
	return l
}

func readSysfsSlave(r *sysReader, name string) Slave {
	dir := path.Join(SysClassNet, name)
	sd := dir + "/bonding_slave/"
	s := Slave{Name: name}
	s.State = r.word(sd + "state")
	// Not word: a slave's MII status can be "going down" or "going back".
	s.MIIStatus = r.text(sd + "mii_status")
	s.LinkFailureCount = r.num(sd + "link_failure_count")
	s.PermHWAddr = r.text(sd + "perm_hwaddr")
	s.QueueID = r.num(sd + "queue_id")
	s.AggregatorID = nonZero(r.num(sd + "ad_aggregator_id"))
	if st := r.num(sd + "ad_actor_oper_port_state"); st != nil {
		s.Actor = &ActorPort{Port{PortState: portState(*st)}}
	}
	if st := r.num(sd + "ad_partner_oper_port_state"); st != nil {
		s.Partner = &PartnerPort{Port{PortState: portState(*st)}}
	}
	s.MTU = r.num(dir + "/mtu")
	s.OperState = r.word(dir + "/operstate")
	// speed and duplex fail with EINVAL on a link that is down; that is
	// "unknown", not a broken file.
	if v := r.readQuiet(dir + "/speed"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			s.SpeedMbps = &n
		}
	}
	if v := r.readQuiet(dir + "/duplex"); v == "full" || v == "half" {
		s.Duplex = &v
	}
	return s
}

// readQuiet reads a file whose read errors mean "unknown" (speed, duplex).
func (r *sysReader) readQuiet(file string) string {
	data, err := readFile(r.fsys, file)
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(data))
}

// nonZero drops an aggregator id of 0: the kernel's "no aggregator".
func nonZero(p *int) *int {
	if p != nil && *p == 0 {
		return nil
	}
	return p
}

func portState(n int) *PortState {
	if n < 0 || n > 255 {
		return nil
	}
	s := PortState(n)
	return &s
}

// ModeHashes reports whether the kernel picks the egress slave with the
// transmit hash in this mode: balance-xor, 802.3ad, and balance-tlb with
// tlb_dynamic_lb=0 (nil tlbDynamicLB counts as the default, 1).
func ModeHashes(mode string, tlbDynamicLB *int) bool {
	switch mode {
	case ModeXOR, Mode8023AD:
		return true
	case ModeTLB:
		return tlbDynamicLB != nil && *tlbDynamicLB == 0
	}
	return false
}

// ReadStatistics reads /sys/class/net/<ifname>/statistics/*. The kernel
// does a full driver stats call per file, so prefer ParseNetDev where
// /proc/net/dev exists; this is the fallback.
func ReadStatistics(fsys fs.FS, ifname string) (Counters, []string) {
	files := StatisticsFiles(ifname)
	return ReadStatisticsFiles(&files, func(file string) ([]byte, error) { return readFile(fsys, file) })
}

// StatisticsFiles names the files ReadStatistics reads for ifname, in
// Counter order. A reader that samples the same interfaces every tick
// keeps them rather than joining ten paths each time.
func StatisticsFiles(ifname string) [NumCounters]string {
	var files [NumCounters]string
	dir := path.Join(SysClassNet, ifname, "statistics")
	for c := Counter(0); c < NumCounters; c++ {
		files[c] = dir + "/" + c.String()
	}
	return files
}

// ReadStatisticsFiles is ReadStatistics over the files StatisticsFiles
// named, each read by read, whose bytes need to stay valid only until
// its next call (a reader may hand out one buffer it reuses). A missing
// file leaves its counter absent; anything else wrong with one says so
// in a warning. Nothing is allocated unless there is a warning.
func ReadStatisticsFiles(files *[NumCounters]string, read func(file string) ([]byte, error)) (Counters, []string) {
	var cs Counters
	var warnings []string
	for c := Counter(0); c < NumCounters; c++ {
		file := files[c]
		data, err := read(file)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				warnings = append(warnings, fmt.Sprintf("/%s: %v", file, err))
			}
			continue
		}
		// The string conversion does not escape (ParseUint copies the
		// text it puts in an error), so a counter's few bytes are
		// converted on the stack.
		v, err := strconv.ParseUint(string(bytes.TrimSpace(data)), 10, 64)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("/%s: not a counter: %q", file, truncate(string(bytes.TrimSpace(data)), 40)))
			continue
		}
		cs.Set(c, v)
	}
	return cs, warnings
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
