// Package lab is bondtop's real-kernel test harness. The build machines'
// own kernel has no bonding driver, so the lab boots Debian's kernels under
// qemu with an initramfs it writes itself: one static Go binary, the guest
// test binary of package lab/guest, which runs as /init, loads bonding,
// veth, the clsact qdisc and BPF classifier, and bridge (with their
// dependencies), runs the scenario tests and powers the VM off; beside it
// /bin/bondtop, the command itself, for the scenarios that run it as a user
// would.
//
// The host side (this package) builds that binary, packs it with the kernel
// modules (decompressed: Debian's 6.12 ships them as .ko.xz) and the judge
// tools into a newc cpio archive, boots the VM, reads the guest's test
// output from the VM's second serial port and replays every guest test as a
// subtest, so `go test -v ./lab/` prints ordinary
// `--- PASS: TestLab/kernel-6.1/...` lines. The kernel's own console goes to
// a log file that a failure prints.
//
// Two kernels: the lab boots Debian bookworm's 6.1 (linux-image-amd64) and
// its 6.12 (linux-image-6.12-amd64), one VM run each, as the subtests
// TestLab/kernel-6.1 and TestLab/kernel-6.12, so every scenario is checked
// on both sides of the kernel changes bondtop cares about (TCX, from 6.6,
// for one). The guest is built once for both. Both run their vCPUs on one
// host thread (-accel tcg,thread=single): multi-threaded TCG races with
// the kernel patching its own text. 6.12 oopses early (int3 in
// sched_clock_cpu); 6.1 locks up both vCPUs when a clsact qdisc comes and
// goes under TCP load (the egress static key flips in the transmit path
// another vCPU is running), which FlowMeterOverhead's alternating windows
// hit within a dozen rounds. Scenarios ask guest.Kernel(t) which kernel they run on
// (Kernel(t).TCX() tells TCX from clsact-only kernels).
//
// Judges: iproute2's tc, bpftool and ethtool go into the guest's /bin with their ELF
// interpreter and shared libraries (copied from the host, where
// lab-deps.sh installs them), for tests to see the kernel through a second
// tool (guest.Judge(t, "tc", ...)). bondtop itself never runs them.
//
// What it needs (`make lab-deps` installs all): qemu-system-x86_64, tc,
// bpftool and the unpacked Debian kernel packages in .cache/lab/kernel-6.1
// and .cache/lab/kernel-6.12. Without qemu or the judges TestLab skips with
// the reason; without one kernel that kernel's subtest does; under CI=true
// each of these fails instead.
//
// The pieces, in the order they run:
//
//	build.go      find the kernels, modules and judges, build the guest binary and bondtop
//	cpio.go       write the initramfs (newc cpio, gzip)
//	vm.go         boot qemu, enforce timeouts, split the serial streams
//	report.go     turn the guest's test output back into per-test results
//	fixtures.go   unpack the fixture trees the guest sent (make lab-fixtures)
//	lab_test.go   TestLab: deps check, skip/fail policy, one subtest per kernel, figures
//
// Environment: BONDTOP_LAB_RUN passes a -test.run pattern to the guest
// (BONDTOP_LAB_RUN=Failover go test -v ./lab/); BONDTOP_LAB_KERNEL picks
// the kernels, comma-separated, by name (6.1, 6.12) or as the path of an
// unpacked linux-image tree (BONDTOP_LAB_KERNEL=6.12 go test -v ./lab/);
// BONDTOP_LAB_QEMU points at another qemu binary, and BONDTOP_LAB_ACCEL=kvm
// uses KVM where it works.
package lab
