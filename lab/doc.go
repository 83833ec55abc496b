// Package lab is bondtop's real-kernel test harness. The build machines'
// own kernel has no bonding driver, so the lab boots Debian's kernel under
// qemu with an initramfs it writes itself: one static Go binary, the guest
// test binary of package lab/guest, which runs as /init, loads bonding, veth
// and bridge (with their dependencies), runs the scenario tests and powers
// the VM off; beside it /bin/bondtop, the command itself, for the scenarios
// that run it as a user would.
//
// The host side (this package) builds that binary, packs it with the kernel
// modules into a newc cpio archive, boots the VM, reads the guest's test
// output from the VM's second serial port and replays every guest test as a
// subtest of TestLab, so `go test -v ./lab/` prints ordinary
// `--- PASS: TestLab/...` lines. The kernel's own console goes to a log file
// that a failure prints.
//
// What it needs (`make lab-deps` installs both): qemu-system-x86_64 and an
// unpacked Debian kernel package in .cache/lab/kernel. Without them TestLab
// skips with the reason, or fails under CI=true.
//
// The pieces, in the order they run:
//
//	build.go      find the kernel and modules, build the guest binary and bondtop
//	cpio.go       write the initramfs (newc cpio, gzip)
//	vm.go         boot qemu, enforce timeouts, split the serial streams
//	report.go     turn the guest's test output back into per-test results
//	fixtures.go   unpack the fixture trees the guest sent (make lab-fixtures)
//	lab_test.go   TestLab: deps check, skip/fail policy, subtests, figures
//
// Environment: BONDTOP_LAB_RUN passes a -test.run pattern to the guest
// (BONDTOP_LAB_RUN=Failover go test -v ./lab/), BONDTOP_LAB_KERNEL and
// BONDTOP_LAB_QEMU point at another kernel tree or qemu binary, and
// BONDTOP_LAB_ACCEL=kvm uses KVM where it works.
package lab
