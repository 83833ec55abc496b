package bonding

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// ReadOptions reads every file of /sys/class/net/<bond>/bonding as the
// kernel prints it (trimmed: "802.3ad 4", "100", "10.0.0.1 10.0.0.2"),
// by file name, which is the option's name: what a comparison with the
// host's configuration needs beyond the model (arp_validate,
// num_grat_arp, all_slaves_active, ...). Root-only files that came back
// empty are left out. The error is for a bond without the directory.
func ReadOptions(fsys fs.FS, bond string) (map[string]string, error) {
	dir := path.Join(SysClassNet, bond, "bonding")
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("/%s: %w", dir, err)
	}
	out := make(map[string]string, len(entries))
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := readFile(fsys, dir+"/"+e.Name())
		if err != nil {
			continue // write-only or vanished: nothing to compare
		}
		if v := string(bytes.TrimSpace(data)); v != "" || e.Name() == "arp_ip_target" || e.Name() == "primary" {
			out[e.Name()] = v
		}
	}
	return out, nil
}

// Device is the hardware behind a network interface, from sysfs.
type Device struct {
	// PCI is the interface's PCI function ("0000:3b:00.1"); empty for
	// virtual interfaces (veth, a VM's virtio-net is PCI too).
	PCI string `json:"pci,omitempty"`
	// PhysFn is the physical function's PCI address when the interface is
	// an SR-IOV virtual function.
	PhysFn string `json:"physfn,omitempty"`
}

// Adapter names the physical card a PCI function belongs to: domain,
// bus and device of the function, or of its physical function for a VF
// (the functions of one multi-port card share them). Empty without PCI.
func (d Device) Adapter() string {
	p := d.PCI
	if d.PhysFn != "" {
		p = d.PhysFn
	}
	if i := strings.LastIndexByte(p, '.'); i > 0 {
		return p[:i]
	}
	return p
}

// ReadDevice reads /sys/class/net/<ifname>/device (a link to the PCI
// function) and its physfn link. fsys must resolve links (os.DirFS does);
// an interface without a device, or one that is not on PCI, gives the
// zero Device.
func ReadDevice(fsys fs.FS, ifname string) Device {
	var d Device
	link := path.Join(SysClassNet, ifname, "device")
	target, err := fs.ReadLink(fsys, link)
	if err != nil {
		return d // no device (virtual), or a tree without links
	}
	if isPCIAddress(path.Base(target)) {
		d.PCI = path.Base(target)
	}
	if pf, err := fs.ReadLink(fsys, link+"/physfn"); err == nil && isPCIAddress(path.Base(pf)) {
		d.PhysFn = path.Base(pf)
	}
	return d
}

// isPCIAddress matches DDDD:BB:DD.F in hex.
func isPCIAddress(s string) bool {
	if len(s) != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.' {
		return false
	}
	for i, c := range s {
		if i == 4 || i == 7 || i == 10 {
			continue
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
