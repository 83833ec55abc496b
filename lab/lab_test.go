//go:build linux

package lab

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Timeouts, for each kernel's run. The boot reaches /init in about 2.5 s
// without KVM (4 s under load); one kernel's whole lab should stay under 5
// minutes on 2 cores, both kernels' under 10 (make test-lab gives them 40).
const (
	bootTimeout = 90 * time.Second
	runTimeout  = 12 * time.Minute
)

var fixtures = flag.String("fixtures", "", "capture fixture trees of the lab's scenarios into this `directory` (make lab-fixtures)")

// TestLab builds the guest once, then boots the lab VM once per selected
// kernel (every one of KernelNames unless BONDTOP_LAB_KERNEL picks), each
// as its own subtest, TestLab/kernel-6.1 and TestLab/kernel-6.12, that
// replays each guest test as a subtest of its own.
func TestLab(t *testing.T) {
	if testing.Short() {
		t.Skip("the real-kernel lab does not run with -short")
	}
	root, judges := labDeps(t)
	kernels := SelectedKernels()
	if *fixtures != "" && len(kernels) > 1 {
		t.Fatalf("-fixtures captures one kernel's trees: set BONDTOP_LAB_KERNEL to one of %s", strings.Join(kernels, ", "))
	}
	dir := t.TempDir()
	start := time.Now()
	guestBin := filepath.Join(dir, "guest.test")
	if err := BuildGuest(root, guestBin); err != nil {
		t.Fatal(err)
	}
	// bondtop itself, for the scenarios that run the command (bondtop
	// hash), and the judges that tests compare it against.
	bondtopBin := filepath.Join(dir, "bondtop")
	if err := BuildBondtop(root, bondtopBin); err != nil {
		t.Fatal(err)
	}
	bins := append([]string{bondtopBin}, judges...)
	t.Logf("guest built in %.1fs", time.Since(start).Seconds())
	for _, sel := range kernels {
		k, err := FindKernel(root, sel)
		name := "kernel-" + filepath.Base(sel)
		if err == nil {
			name = "kernel-" + k.Name
		}
		t.Run(name, func(t *testing.T) {
			if err != nil {
				unavailable(t, err.Error())
			}
			runLab(t, k, guestBin, bins)
		})
	}
}

// runLab packs the initramfs for kernel k, boots it and replays the guest's
// tests as subtests of t.
func runLab(t *testing.T, k *Kernel, guestBin string, bins []string) {
	dir := t.TempDir()
	start := time.Now()
	initrd := filepath.Join(dir, "initrd.gz")
	if err := WriteInitramfs(initrd, guestBin, k, bins...); err != nil {
		t.Fatal(err)
	}
	t.Logf("initramfs packed in %.1fs (kernel %s)", time.Since(start).Seconds(), k.Release)

	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	if d, ok := t.Deadline(); ok && time.Until(d) < runTimeout+30*time.Second {
		// Leave time to report before go test's own timeout panics.
		ctx, cancel = context.WithDeadline(context.Background(), d.Add(-30*time.Second))
	}
	defer cancel()
	// The guest's own timeout fires first, so a hung test ends with the
	// guest's goroutine dump on the report port rather than a killed VM.
	deadline, _ := ctx.Deadline()
	guestTimeout := time.Until(deadline) - bootTimeout/2
	guestArgs := []string{"-test.timeout=" + guestTimeout.Round(time.Second).String()}
	if run := os.Getenv("BONDTOP_LAB_RUN"); run != "" {
		guestArgs = append(guestArgs, "-test.run="+run)
	}
	if *fixtures != "" {
		guestArgs = append(guestArgs, "-lab.fixtures")
	}
	vm := &VM{Kernel: k.Image, Initramfs: initrd, InitArgs: guestArgs, ConsoleLog: filepath.Join(dir, "console.log"),
		SingleThread: true}
	boot := time.Now()
	run, err := vm.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Kill the VM on every way out, then wait for it.
	defer func() {
		cancel()
		for range run.Lines {
		}
		run.Wait()
	}()
	consoleTail := func() string { return tail(vm.ConsoleLog, 30) }

	// Boot: the first line from init, within bootTimeout.
	bootTimer := time.AfterFunc(bootTimeout, cancel)
	var measures []string
	var lastOutput []string
	next := func() (event, bool) {
		line, ok := <-run.Lines
		if !ok {
			return event{}, false
		}
		ev := parseLine(line)
		if m := measureLine.FindStringSubmatch(ev.Text); m != nil {
			measures = append(measures, m[1])
		}
		return ev, true
	}
	booted := false
	for !booted {
		ev, ok := next()
		if !ok {
			t.Fatalf("the VM ended before init reported (boot timeout %v): qemu: %v; console:\n%s", bootTimeout, run.Wait(), consoleTail())
		}
		switch ev.Kind {
		case evInit:
			booted = true
			bootTimer.Stop()
			t.Logf("VM booted in %.1fs: kernel %s", time.Since(boot).Seconds(), ev.Text)
			measures = append(measures, fmt.Sprintf("boot = %.3f s", time.Since(boot).Seconds()))
		case evError:
			t.Fatalf("guest init failed: %s; console:\n%s", ev.Text, consoleTail())
		}
	}

	ran, exit := 0, ""
	var fixture []string
	// Each failed guest test's output, told again after the measures:
	// a CI log that keeps only its tail still says why.
	var failed []string
loop:
	for {
		ev, ok := next()
		if !ok {
			break
		}
		switch ev.Kind {
		case evStart:
			ran++
			name := ev.Name
			t.Run(strings.TrimPrefix(name, "Test"), func(t *testing.T) {
				var said []string
				for {
					ev, ok := next()
					if !ok {
						t.Errorf("the VM ended during %s; console:\n%s", name, consoleTail())
						return
					}
					switch ev.Kind {
					case evOutput:
						if ev.Text != "" {
							fmt.Fprintln(t.Output(), ev.Text)
							if !measureLine.MatchString(ev.Text) {
								said = append(said, ev.Text)
							}
						}
					case evEnd:
						switch ev.Result {
						case "FAIL":
							t.Fail()
							failed = append(failed, fmt.Sprintf("%s failed; what it said last:\n\t%s", name, strings.Join(failingLines(said, 40), "\n\t")))
						case "SKIP":
							t.SkipNow()
						}
						return
					default:
						t.Errorf("unexpected line from init during the test: %+v", ev)
						return
					}
				}
			})
		case evOutput:
			if ev.Text != "" {
				lastOutput = append(lastOutput, ev.Text)
			}
		case evFixture:
			fixture = append(fixture, ev.Text)
		case evError:
			t.Errorf("guest: %s", ev.Text)
		case evExit:
			exit = ev.Text
			break loop
		}
	}
	if ctx.Err() != nil {
		t.Errorf("the lab ran out of time (%v); console:\n%s", runTimeout, consoleTail())
	}
	if exit != "0" {
		t.Errorf("guest test binary: exit %q; its last output:\n%s\nconsole:\n%s", exit, strings.Join(lastOutput, "\n"), consoleTail())
	}
	if ran == 0 && exit == "0" {
		t.Errorf("the guest ran no test")
	}
	if *fixtures != "" {
		if len(fixture) == 0 {
			t.Errorf("-fixtures: the guest sent no fixtures")
		} else if err := saveFixtures(*fixtures, fixture); err != nil {
			t.Errorf("fixtures: %v", err)
		} else {
			t.Logf("fixtures written to %s", *fixtures)
		}
	}
	measures = append(measures, fmt.Sprintf("lab_wall_time = %.3f s", time.Since(start).Seconds()))
	t.Logf("measured on kernel %s (%s):\n\t%s", k.Name, k.Release, strings.Join(measures, "\n\t"))
	for _, f := range failed {
		t.Logf("on kernel %s, %s", k.Name, f)
	}
}

// labDeps finds the module root, qemu and the judges, or skips the test
// with the reason (fails under CI, where a missing lab must never pass
// unnoticed). Each kernel is looked for by its own subtest.
func labDeps(t *testing.T) (root string, judges []string) {
	t.Helper()
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	if _, err := QEMU(); err != nil {
		missing = append(missing, "qemu-system-x86_64 is not installed")
	}
	judges, err = FindJudges()
	if err != nil {
		missing = append(missing, err.Error())
	}
	if len(missing) > 0 {
		unavailable(t, strings.Join(missing, "; "))
	}
	return root, judges
}

// unavailable ends a test whose lab dependency is missing: it skips with
// the reason, or fails under CI=true.
func unavailable(t *testing.T, why string) {
	t.Helper()
	if _, err := exec.LookPath("apt-get"); err != nil || os.Geteuid() != 0 {
		why += ": the lab needs root and apt to install qemu-system-x86, iproute2 and bpftool and Debian's kernels (run make lab-deps as root)"
	} else {
		why += ": run make lab-deps"
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("real-kernel lab unavailable under CI: %s", why)
	}
	t.Skipf("real-kernel lab skipped: %s", why)
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
