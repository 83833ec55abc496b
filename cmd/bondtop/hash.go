package main

// `bondtop hash`: which slave will a flow take?
//
// Live (this host): the bond's mode, policy and usable slaves from the live
// source, the route and the neighbour of the destination from netlink, the
// kernel's hash (bonding.Predictor); it prints the slave and why.
//
// Offline (planning, scripts): flows on standard input, one per line, and
// one answer per line, in order, so `paste flows answers` lines up.

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/live"
	"github.com/bondtop/bondtop/internal/printable"
	"github.com/bondtop/bondtop/netpath"
)

// hashOptions are the parsed `bondtop hash` command line.
type hashOptions struct {
	// Offline.
	policy   string
	slaves   string
	srcMAC   string
	noL4Hash bool
	// Live.
	proto string
	sport int
	src   string
	// Both.
	kernel string
	args   []string
}

func parseHashArgs(args []string) (hashOptions, error) {
	var o hashOptions
	fs := flag.NewFlagSet("bondtop hash", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.policy, "policy", "", "")
	fs.StringVar(&o.slaves, "slaves", "", "")
	fs.StringVar(&o.srcMAC, "src-mac", "", "")
	fs.BoolVar(&o.noL4Hash, "no-l4-hash", false, "")
	fs.StringVar(&o.proto, "proto", "tcp", "")
	fs.IntVar(&o.sport, "sport", -1, "")
	fs.StringVar(&o.src, "src", "", "")
	fs.StringVar(&o.kernel, "kernel", "", "")
	var err error
	if o.args, err = parseInterleaved(fs, args); err != nil {
		return o, err
	}
	offline := o.policy != "" || o.slaves != "" || o.srcMAC != ""
	switch {
	case offline && len(o.args) > 0:
		return o, errors.New("hash: give either BOND DEST (this host) or --policy, --slaves and --src-mac (flows on standard input), not both")
	case offline && (o.policy == "" || o.slaves == "" || o.srcMAC == ""):
		return o, errors.New("hash: offline mode needs --policy, --slaves and --src-mac")
	case !offline && len(o.args) != 2:
		return o, errors.New("hash: give a bond and a destination (bondtop hash bond0 10.0.0.5:443), or --policy, --slaves and --src-mac to read flows from standard input")
	case o.proto != "tcp" && o.proto != "udp":
		return o, fmt.Errorf("hash: --proto %q: tcp or udp", o.proto)
	case o.sport > 65535 || o.sport < -1:
		return o, fmt.Errorf("hash: --sport %d: a port is 0 to 65535", o.sport)
	}
	return o, nil
}

// runHash is `bondtop hash ARGS`; it returns the exit code.
func runHash(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, err := parseHashArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usageText)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "bondtop: %v\nRun 'bondtop -h' for usage.\n", err)
		return exitUsage
	}
	k, kFrom, err := hashKernel(o.kernel)
	if err != nil {
		fmt.Fprintf(stderr, "bondtop: hash: %v\n", err)
		return exitUsage
	}
	if len(o.args) == 0 {
		return hashOffline(o, k, stdin, stdout, stderr)
	}
	return fail(stderr, hashLive(o, k, kFrom, stdout))
}

// hashKernel is --kernel, else the running kernel's upstream version.
func hashKernel(flagValue string) (bonding.KernelVersion, string, error) {
	if flagValue != "" {
		k, err := bonding.ParseKernelVersion(flagValue)
		if err != nil {
			return k, "", fmt.Errorf("--kernel: %w", err)
		}
		return k, "--kernel", nil
	}
	return bonding.RunningKernel(os.DirFS("/"))
}

// hashOffline answers the flows on in, one line each:
//
//	SLAVE HASH INDEX   the slave, the kernel's hash (hex) and the slave's
//	                   position among --slaves (from 0)
//	- unpredictable    the kernel decides by something the line does not
//	                   show (encap3+4 and the socket's hash); the reason is
//	                   printed once on stderr
//	- error            the line is not a flow; stderr says why, with its
//	                   number, and the exit code is 1 once every line is
//	                   answered
//
// Empty lines and lines starting with # are copied as they are, so the
// answers stay line for line with the input.
func hashOffline(o hashOptions, k bonding.KernelVersion, in io.Reader, stdout, stderr io.Writer) int {
	policy, err := bonding.ParsePolicy(o.policy)
	if err != nil {
		fmt.Fprintf(stderr, "bondtop: hash: --policy: %v\n", err)
		return exitUsage
	}
	mac, err := parseMAC(o.srcMAC)
	if err != nil {
		fmt.Fprintf(stderr, "bondtop: hash: --src-mac: %v\n", err)
		return exitUsage
	}
	var slaves []string
	for _, s := range strings.Split(o.slaves, ",") {
		if s = strings.TrimSpace(s); s != "" {
			slaves = append(slaves, s)
		}
	}
	if len(slaves) == 0 {
		fmt.Fprintln(stderr, "bondtop: hash: --slaves: name at least one slave")
		return exitUsage
	}
	// balance-xor and 802.3ad pick alike once the usable slaves are known,
	// and --slaves lists exactly those.
	p := &bonding.Predictor{Mode: bonding.ModeXOR, Policy: policy, Kernel: k, Usable: slaves}
	// A policy the kernel lacks fails every line: say so once.
	probe := bonding.Flow{Src: netip.IPv4Unspecified(), Dst: netip.IPv4Unspecified()}
	if _, err := bonding.Hash(policy, &probe, k); err != nil && !errors.Is(err, bonding.ErrUnpredictable) {
		fmt.Fprintf(stderr, "bondtop: hash: %v (kernel %s)\n", err, k)
		return exitUsage
	}

	w := bufio.NewWriterSize(stdout, 64<<10)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	bad, line := 0, 0
	noted := false
	var buf []byte
	for sc.Scan() {
		line++
		text := sc.Text()
		if t := strings.TrimSpace(text); t == "" || strings.HasPrefix(t, "#") {
			w.WriteString(text)
			w.WriteByte('\n')
			continue
		}
		f, err := parseFlowLine(text)
		if err == nil {
			f.SrcMAC = mac
			f.L4Hash = !o.noL4Hash
			var c bonding.Choice
			if c, err = p.Predict(&f); err == nil {
				buf = buf[:0]
				switch c.Outcome {
				case bonding.Hashed:
					buf = append(buf, c.Slave...)
					buf = append(buf, " 0x"...)
					buf = strconv.AppendUint(buf, uint64(c.Hash), 16)
					buf = append(buf, ' ')
					buf = strconv.AppendInt(buf, int64(c.Index), 10)
				default:
					buf = append(buf, "- unpredictable"...)
					if !noted {
						noted = true
						fmt.Fprintf(stderr, "bondtop: hash: note: %s", c.Reason)
						if policy == bonding.PolicyEncap34 {
							fmt.Fprint(stderr, " (--no-l4-hash if these packets carry none: forwarded without an RSS hash, unconnected UDP sockets)")
						}
						fmt.Fprintln(stderr)
					}
				}
				buf = append(buf, '\n')
				w.Write(buf)
				continue
			}
		}
		bad++
		fmt.Fprintf(stderr, "bondtop: hash: line %d: %s\n", line, printable.String(err.Error()))
		w.WriteString("- error\n")
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(stderr, "bondtop: hash: %v\n", err)
		return exitRuntime
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(stderr, "bondtop: hash: line %d: %v\n", line+1, err)
		return exitRuntime
	}
	if bad > 0 {
		fmt.Fprintf(stderr, "bondtop: hash: %d of %d lines were not flows (answered \"- error\")\n", bad, line)
		return exitRuntime
	}
	return exitOK
}

// parseFlowLine reads "SRC_IP DST_IP SPORT DPORT DST_MAC" (a UDP flow).
func parseFlowLine(s string) (bonding.Flow, error) {
	var f bonding.Flow
	var fields [5]string
	n := splitFields(s, fields[:])
	if n != 5 {
		return f, fmt.Errorf("%d fields, want 5: SRC_IP DST_IP SPORT DPORT DST_MAC", n)
	}
	var err error
	if f.Src, err = netip.ParseAddr(fields[0]); err != nil {
		return f, fmt.Errorf("source address %q: not an IP address", fields[0])
	}
	if f.Dst, err = netip.ParseAddr(fields[1]); err != nil {
		return f, fmt.Errorf("destination address %q: not an IP address", fields[1])
	}
	// A zone (fe80::1%eth0) does not travel in the packet.
	f.Src, f.Dst = f.Src.WithZone(""), f.Dst.WithZone("")
	if f.Src.Is4() != f.Dst.Is4() {
		return f, fmt.Errorf("%s and %s: one IPv4 and one IPv6 address", f.Src, f.Dst)
	}
	if f.SrcPort, err = parsePort(fields[2]); err != nil {
		return f, fmt.Errorf("source port: %w", err)
	}
	if f.DstPort, err = parsePort(fields[3]); err != nil {
		return f, fmt.Errorf("destination port: %w", err)
	}
	if f.DstMAC, err = parseMAC(fields[4]); err != nil {
		return f, fmt.Errorf("destination MAC: %w", err)
	}
	f.Proto = bonding.ProtoUDP
	return f, nil
}

// splitFields is strings.Fields (spaces and tabs) into out, without
// allocating; it returns the number of fields, which may exceed len(out).
func splitFields(s string, out []string) int {
	n := 0
	for i := 0; i < len(s); {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r') {
			i++
		}
		if i == len(s) {
			break
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '\t' && s[j] != '\r' {
			j++
		}
		if n < len(out) {
			out[n] = s[i:j]
		}
		n++
		i = j
	}
	return n
}

func parsePort(s string) (uint16, error) {
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil {
		return 0, fmt.Errorf("%q is not a port (0 to 65535)", s)
	}
	return uint16(n), nil
}

// parseMAC reads a 6-byte MAC address: six pairs of hex digits separated
// by ':' or '-' (aa:bb:cc:dd:ee:ff), or Cisco's aabb.ccdd.eeff.
func parseMAC(s string) ([6]byte, error) {
	var mac [6]byte
	hex := func(c byte) (byte, bool) {
		switch {
		case c >= '0' && c <= '9':
			return c - '0', true
		case c >= 'a' && c <= 'f':
			return c - 'a' + 10, true
		case c >= 'A' && c <= 'F':
			return c - 'A' + 10, true
		}
		return 0, false
	}
	pair := func(i int) (byte, bool) {
		h, ok1 := hex(s[i])
		l, ok2 := hex(s[i+1])
		return h<<4 | l, ok1 && ok2
	}
	switch {
	case len(s) == 17 && (s[2] == ':' || s[2] == '-'):
		for i := range mac {
			if i > 0 && s[3*i-1] != s[2] {
				return mac, badMAC(s)
			}
			b, ok := pair(3 * i)
			if !ok {
				return mac, badMAC(s)
			}
			mac[i] = b
		}
	case len(s) == 14 && s[4] == '.' && s[9] == '.':
		for i := range mac {
			b, ok := pair(2*i + i/2)
			if !ok {
				return mac, badMAC(s)
			}
			mac[i] = b
		}
	default:
		return mac, badMAC(s)
	}
	return mac, nil
}

func badMAC(s string) error { return fmt.Errorf("%q is not an Ethernet MAC address", s) }

// path is how this host would send to a destination (netpath.Lookup).
type path = netpath.Path

// lookupPath asks the routing and neighbour tables (netpath.Lookup).
func lookupPath(bond string, dst netip.Addr) (path, error) { return netpath.Lookup(bond, dst) }

// hashLive answers for one destination from this host.
func hashLive(o hashOptions, k bonding.KernelVersion, kFrom string, w io.Writer) error {
	bondName, dest := o.args[0], o.args[1]
	dst, port, err := parseDest(dest)
	if err != nil {
		return err
	}
	src, err := live.New()
	if err != nil {
		return err
	}
	defer src.Close()
	r, err := src.Read()
	if err != nil {
		return err
	}
	b := r.Bond(bondName)
	if b == nil {
		names := make([]string, 0, len(r.Bonds))
		for _, b := range r.Bonds {
			names = append(names, b.Name)
		}
		return &collector.NotFoundError{Name: bondName, Bonds: names}
	}
	pth, err := lookupPath(bondName, dst)
	if err != nil {
		return err
	}
	if o.src != "" {
		if pth.Src, err = netip.ParseAddr(o.src); err != nil {
			return fmt.Errorf("--src %q: not an IP address", o.src)
		}
	}
	pred, err := bonding.NewPredictor(b, k)
	if err != nil {
		return err
	}
	f := bonding.Flow{SrcMAC: pth.SrcMAC, DstMAC: pth.DstMAC, VLAN: pth.VLAN, Src: pth.Src, Dst: dst,
		Proto: bonding.ProtoTCP, DstPort: port, L4Hash: true}
	if o.proto == "udp" {
		f.Proto = bonding.ProtoUDP
	}
	rep := hashReport{bond: b, pred: pred, flow: f, path: pth, kernel: k, kernelFrom: kFrom, proto: o.proto, sport: o.sport}
	return rep.write(w)
}

// parseDest reads HOST:PORT, [V6]:PORT; the host must be an address.
func parseDest(s string) (netip.Addr, uint16, error) {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		if a, aerr := netip.ParseAddr(s); aerr == nil {
			return a, 0, fmt.Errorf("%s: give the destination port too (%s)", s, netip.AddrPortFrom(a, 443))
		}
		return netip.Addr{}, 0, fmt.Errorf("%q: want ADDRESS:PORT (10.0.0.5:443, [2001:db8::5]:443)", s)
	}
	return ap.Addr().WithZone(""), ap.Port(), nil
}

// hashReport is the answer of live mode, with its reasons.
type hashReport struct {
	bond       *bonding.Bond
	pred       *bonding.Predictor
	flow       bonding.Flow
	path       path
	kernel     bonding.KernelVersion
	kernelFrom string
	proto      string
	sport      int
}

// needsDstMAC reports whether the policy reads the next hop's MAC for IP
// packets (layer2, layer2+3, encap2+3).
func needsDstMAC(p bonding.Policy) bool {
	return p == bonding.PolicyLayer2 || p == bonding.PolicyLayer23 || p == bonding.PolicyEncap23
}

// sportMatters reports whether the source port changes the answer.
func sportMatters(p *bonding.Predictor) bool {
	switch p.Mode {
	case bonding.ModeXOR, bonding.Mode8023AD, bonding.ModeTLB:
		return p.Policy == bonding.PolicyLayer34 || p.Policy == bonding.PolicyEncap34
	}
	return false
}

func (r *hashReport) write(w io.Writer) error {
	p, f := r.pred, r.flow
	policy := "-"
	switch p.Mode {
	case bonding.ModeXOR, bonding.Mode8023AD, bonding.ModeTLB:
		policy = p.Policy.String()
	}
	fmt.Fprintf(w, "%s: mode %s, xmit_hash_policy %s, kernel %s (%s)\n", printable.String(r.bond.Name), p.Mode, policy, r.kernel, r.kernelFrom)
	via := r.path.Dev
	if r.path.VLAN != 0 {
		via = fmt.Sprintf("%s (VLAN %d on %s)", r.path.Dev, r.path.VLAN, r.bond.Name)
	}
	nh := r.path.NextHop.String()
	if r.path.HaveDstMAC {
		nh += " at " + net.HardwareAddr(r.path.DstMAC[:]).String()
	} else {
		nh += " (no neighbour entry yet)"
	}
	fmt.Fprintf(w, "route: %s -> %s via %s, next hop %s, source MAC %s\n",
		r.path.Src, f.Dst, printable.String(via), nh, net.HardwareAddr(r.path.SrcMAC[:]))
	usable, excluded := bonding.UsableSlaves(r.bond)
	fmt.Fprintf(w, "usable slaves (enslave order): %s\n", printable.String(joinOrNone(usable)))
	for _, e := range excluded {
		fmt.Fprintf(w, "  not usable: %s: %s\n", printable.String(e.Slave), printable.String(e.Reason))
	}
	if needsDstMAC(p.Policy) && !r.path.HaveDstMAC && (p.Mode == bonding.ModeXOR || p.Mode == bonding.Mode8023AD || p.Mode == bonding.ModeTLB) {
		return fmt.Errorf("%s hashes the next hop's MAC and %s has no neighbour entry: send it a packet (ping -c1 %s) and ask again", p.Policy, r.path.NextHop, r.path.NextHop)
	}

	if r.sport >= 0 || !sportMatters(p) {
		if r.sport >= 0 {
			f.SrcPort = uint16(r.sport)
		}
		return r.writeOne(w, &f)
	}
	// The source port is the kernel's to pick: show where the ephemeral
	// range goes.
	return r.writeRange(w, &f)
}

// writeOne prints the answer for one flow.
func (r *hashReport) writeOne(w io.Writer, f *bonding.Flow) error {
	c, err := r.pred.Predict(f)
	if err != nil {
		return err
	}
	sport := "any"
	if r.sport >= 0 {
		sport = strconv.Itoa(int(f.SrcPort))
	}
	fmt.Fprintf(w, "flow: %s %s port %s -> %s\n", r.proto, f.Src, sport, netip.AddrPortFrom(f.Dst, f.DstPort))
	switch c.Outcome {
	case bonding.Hashed:
		fmt.Fprintf(w, "slave: %s  (hash 0x%08x %% %d usable = %d)\n", printable.String(c.Slave), c.Hash, c.Count, c.Index)
	case bonding.Active:
		fmt.Fprintf(w, "slave: %s  (%s)\n", printable.String(c.Slave), printable.String(c.Reason))
	default:
		fmt.Fprintf(w, "slave: -  (%s: %s)\n", c.Outcome, printable.String(c.Reason))
		if r.pred.Policy == bonding.PolicyEncap34 && f.L4Hash {
			g := *f
			g.L4Hash = false
			if c2, err := r.pred.Predict(&g); err == nil && c2.Outcome == bonding.Hashed {
				fmt.Fprintf(w, "  a packet without a socket hash (forwarded, unconnected UDP) would take %s (hash 0x%08x)\n", printable.String(c2.Slave), c2.Hash)
			}
		}
	}
	return nil
}

// writeRange prints how the ephemeral source ports spread over the slaves.
func (r *hashReport) writeRange(w io.Writer, f *bonding.Flow) error {
	lo, hi := ephemeralPorts()
	// Unpredictable or not hashed at all (active slave, ...): the port
	// does not help.
	f.SrcPort = uint16(lo)
	if c, err := r.pred.Predict(f); err != nil || c.Outcome != bonding.Hashed {
		r.sport = -1
		return r.writeOne(w, f)
	}
	counts := make(map[string]int)
	n := 0
	for port := lo; port <= hi; port++ {
		f.SrcPort = uint16(port)
		c, err := r.pred.Predict(f)
		if err != nil {
			return err
		}
		counts[c.Slave]++
		n++
	}
	fmt.Fprintf(w, "flow: %s %s port %d-%d (the kernel picks; --sport N for one) -> %s\n", r.proto, f.Src, lo, hi, netip.AddrPortFrom(f.Dst, f.DstPort))
	fmt.Fprintf(w, "slave: depends on the source port:\n")
	for _, s := range r.pred.Usable {
		fmt.Fprintf(w, "  %-12s %5.1f%% of source ports\n", printable.String(s), 100*float64(counts[s])/float64(n))
	}
	return nil
}

// ephemeralPorts is the kernel's ephemeral port range.
func ephemeralPorts() (int, int) { return netpath.EphemeralPorts() }

func joinOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, " ")
}
