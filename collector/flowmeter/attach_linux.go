package flowmeter

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Our cls_bpf filters carry this name prefix, the owner's pid and start
// time, and whether the owner added the clsact qdisc: enough for a later
// run to know a filter is ours, whether its owner still lives, and whether
// the qdisc may go with it. TCX links need none of this: they go when
// their file descriptor closes, a crash included.
const (
	filterPrefix = "bondtop-flowmeter"
	filterHandle = 0xb07d
	qdiscOurs    = " qdisc=ours"
)

// owner is a process by pid and start time (a pid alone can be reused).
type owner struct {
	pid   int
	start uint64
}

func self() owner {
	pid := os.Getpid()
	return owner{pid: pid, start: processStart(pid)}
}

// processStart is field 22 of /proc/PID/stat (clock ticks since boot); 0
// when the process does not exist.
func processStart(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	// The command name may hold spaces and parentheses: fields count
	// from the last ')'.
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0
	}
	n, _ := strconv.ParseUint(f[19], 10, 64)
	return n
}

func (o owner) filterName(addedQdisc bool) string {
	s := fmt.Sprintf("%s pid=%d start=%d", filterPrefix, o.pid, o.start)
	if addedQdisc {
		s += qdiscOurs
	}
	return s
}

// parseFilterName reads what filterName wrote; ok is false for a filter
// that is not ours.
func parseFilterName(name string) (o owner, addedQdisc, ok bool) {
	if !strings.HasPrefix(name, filterPrefix+" ") {
		return owner{}, false, false
	}
	for _, f := range strings.Fields(name[len(filterPrefix):]) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "pid":
			o.pid, _ = strconv.Atoi(v)
		case "start":
			o.start, _ = strconv.ParseUint(v, 10, 64)
		case "qdisc":
			addedQdisc = v == "ours"
		}
	}
	return o, addedQdisc, o.pid > 0
}

func (o owner) alive() bool { return processStart(o.pid) == o.start && o.start != 0 }

// attachment is the meter on one slave.
type attachment struct {
	ifindex int
	name    string
	tcx     []link.Link
	filters []*netlink.BpfFilter
	// addedQdisc: we created the slave's clsact qdisc, so we remove it
	// when we leave, if nothing else uses it by then.
	addedQdisc bool
}

func (a *attachment) kind() string {
	if len(a.tcx) > 0 {
		return "tcx"
	}
	return "clsact"
}

func (a *attachment) attachTCX(egress, ingress *ebpf.Program) error {
	for _, p := range []struct {
		prog *ebpf.Program
		at   ebpf.AttachType
	}{{egress, ebpf.AttachTCXEgress}, {ingress, ebpf.AttachTCXIngress}} {
		// First in line, so the meter sees every packet before another
		// program decides its fate.
		l, err := link.AttachTCX(link.TCXOptions{Interface: a.ifindex, Program: p.prog, Attach: p.at, Anchor: link.Head()})
		if err != nil {
			a.detach()
			return fmt.Errorf("attaching the flow meter through TCX: %w", err)
		}
		a.tcx = append(a.tcx, l)
	}
	return nil
}

func (a *attachment) attachClsact(o owner, egress, ingress *ebpf.Program) error {
	lnk, err := netlink.LinkByIndex(a.ifindex)
	if err != nil {
		return fmt.Errorf("interface %d: %w", a.ifindex, err)
	}
	has, err := hasClsact(lnk)
	if err != nil {
		return err
	}
	if !has {
		q := &netlink.Clsact{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: a.ifindex, Handle: netlink.MakeHandle(0xffff, 0), Parent: netlink.HANDLE_CLSACT}}
		err := netlink.QdiscAdd(q)
		switch {
		case err == nil:
			a.addedQdisc = true
		case errors.Is(err, unix.EEXIST):
			// Someone added it meanwhile: theirs.
		default:
			return fmt.Errorf("adding a clsact qdisc: %w", err)
		}
	}
	for _, p := range []struct {
		prog   *ebpf.Program
		parent uint32
	}{{egress, netlink.HANDLE_MIN_EGRESS}, {ingress, netlink.HANDLE_MIN_INGRESS}} {
		prio, err := firstFreePriority(lnk, p.parent)
		if err != nil {
			a.detach()
			return err
		}
		f := &netlink.BpfFilter{
			FilterAttrs: netlink.FilterAttrs{
				LinkIndex: a.ifindex, Parent: p.parent, Handle: filterHandle,
				Protocol: unix.ETH_P_ALL, Priority: prio,
			},
			Fd: p.prog.FD(), Name: o.filterName(a.addedQdisc), DirectAction: true,
		}
		if err := netlink.FilterAdd(f); err != nil {
			a.detach()
			return fmt.Errorf("adding the flow meter's cls_bpf filter: %w", err)
		}
		a.filters = append(a.filters, f)
	}
	return nil
}

func hasClsact(lnk netlink.Link) (bool, error) {
	qs, err := netlink.QdiscList(lnk)
	if err != nil {
		return false, fmt.Errorf("listing qdiscs of %s: %w", lnk.Attrs().Name, err)
	}
	for _, q := range qs {
		if q.Type() == "clsact" {
			return true, nil
		}
	}
	return false, nil
}

// firstFreePriority is the lowest filter priority not in use under parent:
// the meter runs before every filter already there and shares no
// priority (a shared one must have the same protocol).
func firstFreePriority(lnk netlink.Link, parent uint32) (uint16, error) {
	fs, err := netlink.FilterList(lnk, parent)
	if err != nil {
		return 0, fmt.Errorf("listing filters of %s: %w", lnk.Attrs().Name, err)
	}
	used := map[uint16]bool{}
	for _, f := range fs {
		used[f.Attrs().Priority] = true
	}
	for p := uint16(1); p != 0; p++ {
		if !used[p] {
			return p, nil
		}
	}
	return 0, fmt.Errorf("%s: no free filter priority", lnk.Attrs().Name)
}

// detach removes what attach added: TCX links, our filters, and the clsact
// qdisc if we added it and no filter is left on it. A slave that vanished
// took all of it along.
func (a *attachment) detach() error {
	var errs []error
	for _, l := range a.tcx {
		if err := l.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	a.tcx = nil
	for _, f := range a.filters {
		if err := netlink.FilterDel(f); err != nil && !gone(err) {
			errs = append(errs, fmt.Errorf("removing the flow meter's filter from %s: %w", a.name, err))
		}
	}
	a.filters = nil
	if a.addedQdisc {
		if err := removeQdiscIfUnused(a.ifindex); err != nil {
			errs = append(errs, err)
		}
		a.addedQdisc = false
	}
	return errors.Join(errs...)
}

// gone is an error saying the interface or the filter no longer exists.
func gone(err error) bool {
	return errors.Is(err, unix.ENODEV) || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EINVAL)
}

// removeQdiscIfUnused deletes a clsact qdisc without filters.
func removeQdiscIfUnused(ifindex int) error {
	lnk, err := netlink.LinkByIndex(ifindex)
	if err != nil {
		return nil // the interface is gone, and its qdisc with it
	}
	for _, parent := range []uint32{netlink.HANDLE_MIN_INGRESS, netlink.HANDLE_MIN_EGRESS} {
		fs, err := netlink.FilterList(lnk, parent)
		if err != nil || len(fs) > 0 {
			return nil // in use by someone else (or unknowable): leave it
		}
	}
	q := &netlink.Clsact{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: ifindex, Handle: netlink.MakeHandle(0xffff, 0), Parent: netlink.HANDLE_CLSACT}}
	if err := netlink.QdiscDel(q); err != nil && !gone(err) {
		return fmt.Errorf("removing the clsact qdisc the flow meter added: %w", err)
	}
	return nil
}

// removeStaleFilters deletes our filters whose owner is dead, on every
// interface with a clsact qdisc (only those in ifindexes, when given), and
// the clsact qdisc the dead owner had added, if nothing else uses it.
func removeStaleFilters(me owner, ifindexes map[int]bool) error {
	qs, err := netlink.QdiscList(nil)
	if err != nil {
		return fmt.Errorf("listing qdiscs: %w", err)
	}
	var errs []error
	for _, q := range qs {
		ifindex := q.Attrs().LinkIndex
		if q.Type() != "clsact" || (ifindexes != nil && !ifindexes[ifindex]) {
			continue
		}
		lnk, err := netlink.LinkByIndex(ifindex)
		if err != nil {
			continue
		}
		qdiscTheirs := false
		for _, parent := range []uint32{netlink.HANDLE_MIN_INGRESS, netlink.HANDLE_MIN_EGRESS} {
			fs, err := netlink.FilterList(lnk, parent)
			if err != nil {
				errs = append(errs, fmt.Errorf("listing filters of %s: %w", lnk.Attrs().Name, err))
				continue
			}
			for _, f := range fs {
				bf, ok := f.(*netlink.BpfFilter)
				if !ok {
					continue
				}
				o, added, ours := parseFilterName(bf.Name)
				if !ours || o == me || o.alive() {
					continue
				}
				qdiscTheirs = qdiscTheirs || added
				if err := netlink.FilterDel(bf); err != nil && !gone(err) {
					errs = append(errs, fmt.Errorf("removing a stale flow meter filter from %s: %w", lnk.Attrs().Name, err))
				}
			}
		}
		if qdiscTheirs {
			if err := removeQdiscIfUnused(ifindex); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
