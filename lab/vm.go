package lab

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// VM is one qemu run of the lab kernel. The guest's console (ttyS0: kernel
// messages, panics) goes to ConsoleLog; its report port (ttyS1: init's
// markers and the tests' output) arrives on qemu's stdout, line by line.
type VM struct {
	Kernel     string   // vmlinuz
	Initramfs  string   // initrd.gz
	InitArgs   []string // arguments for the guest's /init (no spaces)
	ConsoleLog string   // file that receives ttyS0
	MemoryMB   int      // default 512
	CPUs       int      // default 2
	// SingleThread runs every vCPU on one host thread
	// (-accel tcg,thread=single): multi-threaded TCG breaks the kernel's
	// text patching (see the package doc). The lab always sets it.
	SingleThread bool
}

// QEMU returns the qemu binary: $BONDTOP_LAB_QEMU, or qemu-system-x86_64
// from PATH.
func QEMU() (string, error) {
	if q := os.Getenv("BONDTOP_LAB_QEMU"); q != "" {
		return q, nil
	}
	return exec.LookPath("qemu-system-x86_64")
}

// Args is qemu's command line after the binary.
func (vm *VM) Args() []string {
	mem, cpus := vm.MemoryMB, vm.CPUs
	if mem == 0 {
		mem = 512
	}
	if cpus == 0 {
		cpus = 2
	}
	// quiet keeps the console to warnings; panic=-1 with -no-reboot turns
	// a guest panic into a qemu exit instead of a hang. The kernel hands
	// what follows "--" to /init as its arguments.
	cmdline := "console=ttyS0 quiet panic=-1"
	if len(vm.InitArgs) > 0 {
		cmdline += " -- " + strings.Join(vm.InitArgs, " ")
	}
	args := []string{
		"-display", "none", "-monitor", "none", "-no-reboot",
		"-m", fmt.Sprint(mem), "-smp", fmt.Sprint(cpus),
	}
	// Software emulation by default: the build machines have no usable
	// KVM (where /dev/kvm exists, qemu 7.2 aborts on -cpu host or never
	// boots). BONDTOP_LAB_ACCEL=kvm opts in where KVM works.
	if os.Getenv("BONDTOP_LAB_ACCEL") == "kvm" {
		args = append(args, "-accel", "kvm", "-cpu", "host")
	} else if vm.SingleThread {
		args = append(args, "-accel", "tcg,thread=single", "-cpu", "max")
	} else {
		args = append(args, "-accel", "tcg", "-cpu", "max")
	}
	return append(args,
		"-kernel", vm.Kernel, "-initrd", vm.Initramfs, "-append", cmdline,
		"-nic", "none",
		"-serial", "file:"+vm.ConsoleLog, // ttyS0
		"-serial", "stdio", // ttyS1
	)
}

// Start boots the VM. Lines delivers the report port's lines and is closed
// when qemu's stdout ends; Wait then returns qemu's exit status. Cancelling
// ctx kills qemu, which is how every timeout ends a run.
func (vm *VM) Start(ctx context.Context) (*Run, error) {
	qemu, err := QEMU()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, qemu, vm.Args()...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", qemu, err)
	}
	lines := make(chan string, 256)
	r := &Run{Lines: lines, cmd: cmd, stderr: &stderr}
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		// Drain, so qemu never blocks on a full pipe after a scan error.
		io.Copy(io.Discard, stdout)
	}()
	return r, nil
}

// Run is a started VM.
type Run struct {
	Lines  <-chan string
	cmd    *exec.Cmd
	stderr *strings.Builder
}

// Wait waits for qemu to exit, after Lines is drained.
func (r *Run) Wait() error {
	err := r.cmd.Wait()
	if err != nil && r.stderr.Len() > 0 {
		err = fmt.Errorf("%w: %s", err, strings.TrimSpace(r.stderr.String()))
	}
	return err
}
