// Package guest is the inside of the lab VM (see package lab). The host
// compiles its tests into one static binary that the VM runs as /init:
// started as pid 1 it mounts /proc, /sys and /dev, loads the kernel modules,
// runs itself again as an ordinary test binary and powers the VM off.
//
// The tests are the lab's scenarios: each builds a topology through netlink
// (a bond in the VM's root network namespace, its peer in a namespace of
// its own), drives traffic and faults, and checks bondtop's collector
// against the kernel's own view. The helpers they share (namespaces, veth
// pairs, bonds, traffic, sysfs and procfs reads) live in the non-test
// files, so a newcomer reads the scenarios as plain steps.
//
// Outside the VM the tests do nothing: `go test ./lab/guest` on a host just
// says so. Run the lab with `go test ./lab/` or `make test-lab`.
package guest
