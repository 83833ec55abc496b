//go:build linux

package guest

import (
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/bondtop/bondtop/bonding"
)

// bondtopBin is the bondtop command the lab puts in the initramfs.
const bondtopBin = "/bin/bondtop"

// hashCmdFlows is the number of flows per policy: 3 policies, half IPv4
// and half IPv6, 72 flows in all.
const hashCmdFlows = 24

// TestHashCommand runs `bondtop hash BOND DEST --proto udp --sport N` (the
// live mode: the bond from the live source, the route and the neighbour
// from netlink) as a user would, for flows over a balance-xor bond of 3
// slaves under layer2, layer2+3 and layer3+4, and compares each answer
// with the slave the kernel sends the flow's datagrams by (tx_packets).
// The destinations are made-up neighbours with permanent entries (see
// hashLab), so the MAC-hashing policies see many next hops. 100% is the
// bar.
func TestHashCommand(t *testing.T) {
	if _, err := os.Stat(bondtopBin); err != nil {
		t.Fatalf("bondtop is not in the initramfs: %v", err)
	}
	p := NewPair(t, 97, 3)
	p.Root.Bond(t, p.Bond, BondSpec{Mode: "balance-xor", XmitHashPolicy: "layer2"}, p.Slaves...)
	lab := newHashLab(t, p, 97, false)
	var srcMAC [6]byte
	copy(srcMAC[:], p.Root.Link(t, p.Bond).Attrs().HardwareAddr)

	total, agree := 0, 0
	for _, policy := range []string{"layer2", "layer2+3", "layer3+4"} {
		if err := os.WriteFile("/sys/class/net/"+p.Bond+"/bonding/xmit_hash_policy", []byte(policy), 0); err != nil {
			t.Fatalf("setting xmit_hash_policy %s: %v", policy, err)
		}
		flows := make([]bonding.Flow, hashCmdFlows)
		for i := range flows {
			f := bonding.Flow{SrcMAC: srcMAC, Proto: bonding.ProtoUDP,
				SrcPort: uint16(1024 + lab.rng.IntN(60000)), DstPort: uint16(1 + lab.rng.IntN(65534))}
			if i%2 == 0 {
				f.Src, f.Dst = lab.local4, lab.dst4[lab.rng.IntN(len(lab.dst4))]
			} else {
				f.Src, f.Dst = lab.local6, lab.dst6[lab.rng.IntN(len(lab.dst6))]
			}
			f.DstMAC = lab.macs[f.Dst]
			flows[i] = f
		}
		// The answers first, two commands at a time (the VM has two
		// CPUs); then the kernel's egress, one flow at a time.
		answers := make([]string, len(flows))
		errs := make([]error, len(flows))
		var wg sync.WaitGroup
		sem := make(chan struct{}, 2)
		for i := range flows {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				answers[i], errs[i] = hashCommand(p.Bond, &flows[i])
			}()
		}
		wg.Wait()
		ok, n := 0, 0
		for i := range flows {
			f := &flows[i]
			kind := kindUDP4
			if f.Dst.Is6() {
				kind = kindUDP6
			}
			got, deltas := lab.egress(t, f, kind)
			desc := fmt.Sprintf("%s: bondtop hash %s %s --proto udp --sport %d", policy, p.Bond, netip.AddrPortFrom(f.Dst, f.DstPort), f.SrcPort)
			switch {
			case errs[i] != nil:
				t.Errorf("%s: %v", desc, errs[i])
			case got == "":
				t.Errorf("%s: the kernel's egress is unclear (tx_packets deltas %v)", desc, deltas)
			case answers[i] != got:
				t.Errorf("%s: says %s, the kernel sent by %s", desc, answers[i], got)
			default:
				ok++
			}
			n++
		}
		t.Logf("%-9s bondtop hash agrees with the kernel on %d of %d flows", policy, ok, n)
		total += n
		agree += ok
	}
	t.Logf("bondtop hash (live mode, the command) vs the kernel: %d of %d flows (%.1f%%)", agree, total, 100*float64(agree)/float64(total))
	Measure(t, "hash_command_agreement", 100*float64(agree)/float64(total), "%")
}

// hashCommand runs bondtop hash for f and returns the slave it names.
func hashCommand(bond string, f *bonding.Flow) (string, error) {
	cmd := exec.Command(bondtopBin, "hash", bond, netip.AddrPortFrom(f.Dst, f.DstPort).String(),
		"--proto", "udp", "--sport", strconv.Itoa(int(f.SrcPort)))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	// "slave: dut1  (hash 0x... % 3 usable = 1)"
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "slave: "); ok {
			if name := strings.Fields(rest); len(name) > 0 && name[0] != "-" {
				return name[0], nil
			}
			return "", fmt.Errorf("no slave named:\n%s", out)
		}
	}
	return "", fmt.Errorf("no slave line in the output:\n%s", out)
}
