package bonding

import (
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
)

// KernelVersion is an upstream Linux version. The transmit hash changed a
// few times (see Hash); Patch matters only for the stable series that took
// a change late (5.10, 5.11, 5.15, 5.17).
type KernelVersion struct{ Major, Minor, Patch int }

// String gives "major.minor.patch".
func (v KernelVersion) String() string {
	return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
}

// less reports whether v is older than major.minor.patch.
func (v KernelVersion) less(major, minor, patch int) bool {
	if v.Major != major {
		return v.Major < major
	}
	if v.Minor != minor {
		return v.Minor < minor
	}
	return v.Patch < patch
}

// AtLeast reports whether v is major.minor.patch or newer.
func (v KernelVersion) AtLeast(major, minor, patch int) bool { return !v.less(major, minor, patch) }

// ParseKernelVersion reads the leading "major.minor[.patch]" of a release
// string such as "6.1.0-57-amd64", "5.15.149" or "4.18.0-553.el8_10.x86_64".
func ParseKernelVersion(s string) (KernelVersion, error) {
	m := leadingVersion.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return KernelVersion{}, fmt.Errorf("%q is not a kernel version (want e.g. 6.1 or 5.15.38)", s)
	}
	var v KernelVersion
	v.Major, _ = strconv.Atoi(m[1])
	v.Minor, _ = strconv.Atoi(m[2])
	if m[3] != "" {
		v.Patch, _ = strconv.Atoi(m[3])
	}
	return v, nil
}

var (
	leadingVersion = regexp.MustCompile(`^v?(\d{1,3})\.(\d{1,3})(?:\.(\d{1,5}))?`)
	// Debian and its derivatives name the upstream stable version in
	// uname -v ("... Debian 6.1.158-1 (2025-11-09)"); their release
	// string carries an ABI number in its place ("6.1.0-57-amd64").
	debianVersion = regexp.MustCompile(`Debian (\d+\.\d+\.\d+)`)
)

// RunningKernel finds the upstream version of the kernel whose /proc is in
// fsys (os.DirFS("/") for this host): Ubuntu's /proc/version_signature,
// else the Debian version in /proc/sys/kernel/version, else the release
// string /proc/sys/kernel/osrelease. from names the source, so a caller can
// say where the version came from; distribution kernels carry backports the
// version does not show.
func RunningKernel(fsys fs.FS) (v KernelVersion, from string, err error) {
	// "Ubuntu 5.15.0-105.115-generic 5.15.149": the last field is upstream.
	if b, err := fs.ReadFile(fsys, "proc/version_signature"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			if v, err := ParseKernelVersion(f[len(f)-1]); err == nil {
				return v, "/proc/version_signature " + f[len(f)-1], nil
			}
		}
	}
	if b, err := fs.ReadFile(fsys, "proc/sys/kernel/version"); err == nil {
		if m := debianVersion.FindSubmatch(b); m != nil {
			if v, err := ParseKernelVersion(string(m[1])); err == nil {
				return v, "uname -v Debian " + string(m[1]), nil
			}
		}
	}
	b, err := fs.ReadFile(fsys, "proc/sys/kernel/osrelease")
	if err != nil {
		return KernelVersion{}, "", fmt.Errorf("kernel version: %w (give one with --kernel)", err)
	}
	rel := strings.TrimSpace(string(b))
	v, err = ParseKernelVersion(rel)
	if err != nil {
		return KernelVersion{}, "", errors.Join(err, errors.New("give the version with --kernel"))
	}
	return v, "uname -r " + rel, nil
}

// shiftsEveryPolicy: from 4.14 (commit b5f862180d70, 2017) the final
// "hash >> 1" applied to every policy that reached the IP hash, layer2+3 and
// encap2+3 included; 49aefd131739 (Linux 5.18, stable 5.17.6 and 5.15.38)
// kept it for layer3+4 and encap3+4 only.
func shiftsEveryPolicy(k KernelVersion) bool {
	switch {
	case k.AtLeast(5, 18, 0):
		return false
	case k.Major == 5 && k.Minor == 17:
		return k.Patch < 6
	case k.Major == 5 && k.Minor == 15:
		return k.Patch < 38
	}
	return true
}

// icmpIDHostOrder: a25f82228542 (Linux 5.12, stable 5.11.11 and 5.10.27)
// stores the ICMP identifier in host order; from 5.5, where the identifier
// entered the hash, to then it was stored as the packet has it.
func icmpIDHostOrder(k KernelVersion) bool {
	switch {
	case k.AtLeast(5, 12, 0):
		return true
	case k.Major == 5 && k.Minor == 11:
		return k.Patch >= 11
	case k.Major == 5 && k.Minor == 10:
		return k.Patch >= 27
	}
	return false
}
