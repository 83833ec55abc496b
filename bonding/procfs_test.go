package bonding

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// procDir holds the /proc/net/bonding fixtures; SOURCES.md there says where
// each one comes from.
const procDir = "testdata/proc"

// procPort builds the expected Port of a "details ... lacp pdu" block, in
// the order the kernel prints its lines.
func procPort(sysPrio int, sysMAC string, key, portPrio, portNum, state int) Port {
	return Port{
		SystemPriority: new(sysPrio),
		SystemMAC:      new(sysMAC),
		Key:            new(key),
		PortPriority:   new(portPrio),
		PortNumber:     new(portNum),
		PortState:      new(PortState(state)),
	}
}

// procPlainSlave builds the expected slave of a non-802.3ad bond, or of an
// 802.3ad bond before the LACP lines are added; speed and duplex are given
// as pointers because "Unknown" makes them nil.
func procPlainSlave(name, mii string, speed *int, duplex *string, lfc int, perm string, queue int) Slave {
	return Slave{
		Name:             name,
		MIIStatus:        new(mii),
		SpeedMbps:        speed,
		Duplex:           duplex,
		LinkFailureCount: new(lfc),
		PermHWAddr:       new(perm),
		QueueID:          new(queue),
	}
}

// procChurn adds the 6.x per-slave LACP lines to s.
func procChurn(s Slave, agg int, actorState, partnerState string, actorCount, partnerCount int) Slave {
	s.AggregatorID = new(agg)
	s.ActorChurnState = new(actorState)
	s.PartnerChurnState = new(partnerState)
	s.ActorChurnedCount = new(actorCount)
	s.PartnerChurnedCount = new(partnerCount)
	return s
}

// procDetails adds the actor and partner blocks to s.
func procDetails(s Slave, actor, partner Port) Slave {
	s.Actor = &ActorPort{actor}
	s.Partner = &PartnerPort{partner}
	return s
}

// procHealthy is 8023ad-6.8-healthy-root.txt, also the expected value of
// its CRLF and tabs-and-spaces variants.
func procHealthy() Bond {
	return Bond{
		Name:           "bond0",
		DriverVersion:  new("6.8.0-142-generic"),
		Mode:           new(Mode8023AD),
		XmitHashPolicy: new("layer2+3"),
		MIIStatus:      new("up"),
		MIIMonMs:       new(100),
		UpDelayMs:      new(0),
		DownDelayMs:    new(0),
		PeerNotifyMs:   new(0),
		LACP: &LACP{
			Active:         new(true),
			Rate:           new("fast"),
			MinLinks:       new(0),
			ADSelect:       new("stable"),
			SystemPriority: new(65535),
			SystemMAC:      new("02:1d:22:fd:7e:72"),
			AggregatorID:   new(1),
			NumPorts:       new(2),
			ActorKey:       new(15),
			PartnerKey:     new(15),
			PartnerMAC:     new("02:fc:ce:91:32:14"),
		},
		Slaves: []Slave{
			procDetails(procChurn(procPlainSlave("e1", "up", new(10000), new("full"), 1, "02:1d:22:fd:7e:72", 0),
				1, "monitoring", "monitoring", 0, 0),
				procPort(65535, "02:1d:22:fd:7e:72", 15, 255, 1, 63),
				procPort(65535, "02:fc:ce:91:32:14", 15, 255, 1, 63)),
			procDetails(procChurn(procPlainSlave("e2", "up", new(10000), new("full"), 1, "02:ce:7c:39:59:d3", 0),
				1, "monitoring", "monitoring", 0, 0),
				procPort(65535, "02:1d:22:fd:7e:72", 15, 255, 2, 63),
				procPort(65535, "02:fc:ce:91:32:14", 15, 255, 2, 63)),
		},
	}
}

// procCase is one fixture with the bond and the unknown lines it must give.
type procCase struct {
	file    string
	want    Bond
	unknown []string
}

// procCases gives, for every fixture, every field as read off its text.
func procCases() []procCase {
	four := procHealthy()
	four.LACP.NumPorts = new(4)
	four.Slaves = append(four.Slaves,
		procDetails(procChurn(procPlainSlave("e3", "up", new(10000), new("full"), 0, "02:5a:10:3b:c4:01", 0),
			1, "monitoring", "monitoring", 0, 0),
			procPort(65535, "02:1d:22:fd:7e:72", 15, 255, 3, 63),
			procPort(65535, "02:fc:ce:91:32:14", 15, 255, 3, 63)),
		procDetails(procChurn(procPlainSlave("e4", "up", new(10000), new("full"), 2, "02:5a:10:3b:c4:02", 0),
			1, "monitoring", "monitoring", 0, 0),
			procPort(65535, "02:1d:22:fd:7e:72", 15, 255, 4, 63),
			procPort(65535, "02:fc:ce:91:32:14", 15, 255, 4, 63)),
	)

	return []procCase{
		{file: "8023ad-6.8-healthy-root.txt", want: procHealthy()},
		{file: "synthetic-8023ad-6.8-healthy-root-crlf.txt", want: procHealthy()},
		{file: "synthetic-8023ad-6.8-tabs-spaces.txt", want: procHealthy()},
		{file: "synthetic-8023ad-6.8-4slaves-root.txt", want: four},
		{
			file: "8023ad-6.4-sles-bandwidth-root.txt",
			want: Bond{
				Name:           "bond0",
				DriverVersion:  new("6.4.0-150600.23.17-default"),
				Mode:           new(Mode8023AD),
				XmitHashPolicy: new("layer2+3"),
				MIIStatus:      new("up"),
				MIIMonMs:       new(100),
				UpDelayMs:      new(0),
				DownDelayMs:    new(0),
				PeerNotifyMs:   new(0),
				LACP: &LACP{
					Active:         new(true),
					Rate:           new("fast"),
					MinLinks:       new(0),
					ADSelect:       new("bandwidth"),
					SystemPriority: new(65535),
					SystemMAC:      new("b2:00:00:00:00:01"),
					AggregatorID:   new(1),
					NumPorts:       new(2),
					ActorKey:       new(31),
					PartnerKey:     new(2),
					PartnerMAC:     new("02:00:00:00:00:01"),
				},
				Slaves: []Slave{
					procDetails(procChurn(procPlainSlave("macvlan1", "up", new(200000), new("full"), 2, "b2:00:00:00:00:01", 0),
						1, "none", "none", 1, 2),
						procPort(65535, "b2:00:00:00:00:01", 31, 255, 1, 63),
						procPort(32768, "02:00:00:00:00:01", 2, 255, 4, 63)),
					procDetails(procChurn(procPlainSlave("macvlan0", "up", new(200000), new("full"), 2, "b2:00:00:00:00:01", 0),
						1, "none", "none", 0, 2),
						procPort(65535, "b2:00:00:00:00:01", 31, 255, 2, 63),
						procPort(32768, "02:00:00:00:00:01", 2, 255, 3, 63)),
				},
			},
		},
		{
			file: "8023ad-5.10-churned-nopartner-root.txt",
			want: Bond{
				Name:           "bond0",
				DriverVersion:  new("5.10.0+"),
				Mode:           new(Mode8023AD),
				XmitHashPolicy: new("layer2"),
				MIIStatus:      new("up"),
				MIIMonMs:       new(100),
				UpDelayMs:      new(0),
				DownDelayMs:    new(0),
				PeerNotifyMs:   new(0),
				LACP: &LACP{
					Rate:           new("slow"),
					MinLinks:       new(0),
					ADSelect:       new("stable"),
					SystemPriority: new(65535),
					SystemMAC:      new("f4:1d:6b:6f:3b:97"),
					AggregatorID:   new(2),
					NumPorts:       new(1),
					ActorKey:       new(23),
					PartnerKey:     new(1),
					PartnerMAC:     new("00:00:00:00:00:00"),
				},
				Slaves: []Slave{
					procDetails(procChurn(procPlainSlave("enp145s0f0", "up", new(40000), new("full"), 1, "f4:1d:6b:6f:3b:97", 0),
						1, "churned", "churned", 1, 2),
						procPort(65535, "f4:1d:6b:6f:3b:97", 23, 255, 1, 69),
						procPort(65535, "00:00:00:00:00:00", 1, 255, 1, 1)),
					procDetails(procChurn(procPlainSlave("enp145s0f1", "up", new(40000), new("full"), 0, "f4:1d:6b:6f:3b:98", 0),
						2, "none", "churned", 0, 1),
						procPort(65535, "f4:1d:6b:6f:3b:97", 23, 255, 2, 77),
						procPort(65535, "00:00:00:00:00:00", 1, 255, 1, 1)),
				},
			},
		},
		{
			file: "8023ad-5.14-el9-nonroot.txt",
			want: Bond{
				Name:           "bond0",
				DriverVersion:  new("5.14.0-427.13.1.el9_4.x86_64"),
				Mode:           new(Mode8023AD),
				XmitHashPolicy: new("layer3+4"),
				MIIStatus:      new("up"),
				MIIMonMs:       new(100),
				UpDelayMs:      new(0),
				DownDelayMs:    new(0),
				PeerNotifyMs:   new(0),
				LACP: &LACP{
					Active:   new(true),
					Rate:     new("fast"),
					MinLinks: new(0),
					ADSelect: new("stable"),
				},
				Slaves: []Slave{
					procChurn(procPlainSlave("eth1", "up", new(1000), new("full"), 1, "08:00:27:12:aa:b4", 0), 1, "none", "none", 0, 0),
					procChurn(procPlainSlave("eth2", "up", new(1000), new("full"), 1, "08:00:27:e2:56:e3", 0), 1, "none", "none", 0, 0),
				},
			},
		},
		{
			file: "8023ad-3.7.1-centos6-root.txt",
			want: Bond{
				Name:           "bond0",
				DriverVersion:  new("3.7.1 (April 27, 2011)"),
				Mode:           new(Mode8023AD),
				XmitHashPolicy: new("layer2"),
				MIIStatus:      new("up"),
				MIIMonMs:       new(0),
				UpDelayMs:      new(0),
				DownDelayMs:    new(0),
				LACP: &LACP{
					Rate:         new("slow"),
					MinLinks:     new(0),
					ADSelect:     new("stable"),
					AggregatorID: new(1),
					NumPorts:     new(2),
					ActorKey:     new(17),
					PartnerKey:   new(1),
					PartnerMAC:   new("b0:c7:45:e6:01:de"),
				},
				Slaves: []Slave{
					func() Slave {
						s := procPlainSlave("eth0", "up", new(1000), new("full"), 0, "00:15:17:8e:e2:44", 0)
						s.AggregatorID = new(1)
						return s
					}(),
					func() Slave {
						s := procPlainSlave("eth1", "up", new(1000), new("full"), 0, "00:15:17:8e:e2:45", 0)
						s.AggregatorID = new(1)
						return s
					}(),
				},
			},
		},
		{
			file: "synthetic-8023ad-6.1-no-active-aggregator-root.txt",
			want: Bond{
				Name:           "bond0",
				DriverVersion:  new("6.1.0-28-amd64"),
				Mode:           new(Mode8023AD),
				XmitHashPolicy: new("encap3+4"),
				MIIStatus:      new("down"),
				MIIMonMs:       new(100),
				UpDelayMs:      new(0),
				DownDelayMs:    new(0),
				PeerNotifyMs:   new(0),
				LACP: &LACP{
					Active:             new(false),
					Rate:               new("slow"),
					MinLinks:           new(2),
					ADSelect:           new("count"),
					SystemPriority:     new(100),
					SystemMAC:          new("52:54:00:12:34:56"),
					NoActiveAggregator: true,
				},
				Slaves: []Slave{
					procPlainSlave("ens3", "down", nil, nil, 4, "52:54:00:12:34:56", 0),
					procPlainSlave("ens4", "going back", new(1000), new("full"), 2, "52:54:00:12:34:57", 3),
				},
			},
		},
		{
			file: "activebackup-5.14-el9-failovermac.txt",
			want: Bond{
				Name:          "bond0",
				DriverVersion: new("5.14.0-570.12.1.el9_6.x86_64"),
				Mode:          new(ModeActiveBackup),
				FailOverMAC:   new("active"),
				ActiveSlave:   new("eth1"),
				MIIStatus:     new("up"),
				MIIMonMs:      new(100),
				UpDelayMs:     new(0),
				DownDelayMs:   new(0),
				PeerNotifyMs:  new(0),
				Slaves: []Slave{
					procPlainSlave("eth1", "up", new(1000), new("full"), 0, "08:00:27:46:d2:4b", 0),
					procPlainSlave("eth2", "up", new(1000), new("full"), 0, "08:00:27:63:67:d0", 0),
				},
			},
		},
		{
			file: "activebackup-6.12-debian-speed-unknown.txt",
			want: Bond{
				Name:          "bond0",
				DriverVersion: new("6.12.101+deb13-amd64"),
				Mode:          new(ModeActiveBackup),
				ActiveSlave:   new("enp8s0"),
				MIIStatus:     new("up"),
				MIIMonMs:      new(100),
				UpDelayMs:     new(0),
				DownDelayMs:   new(0),
				PeerNotifyMs:  new(0),
				Slaves: []Slave{
					procPlainSlave("enp8s0", "up", nil, nil, 0, "52:54:00:7c:75:2c", 0),
				},
			},
		},
		{
			file: "activebackup-6.8-primary-reselect.txt",
			want: Bond{
				Name:            "bond0",
				DriverVersion:   new("6.8.0-54-generic"),
				Mode:            new(ModeActiveBackup),
				Primary:         new("ens37"),
				PrimaryReselect: new("always"),
				ActiveSlave:     new("ens37"),
				MIIStatus:       new("up"),
				MIIMonMs:        new(100),
				UpDelayMs:       new(0),
				DownDelayMs:     new(0),
				PeerNotifyMs:    new(0),
				Slaves: []Slave{
					procPlainSlave("ens38", "up", new(1000), new("full"), 0, "00:0c:29:2b:b1:59", 0),
					procPlainSlave("ens37", "up", new(1000), new("full"), 0, "00:0c:29:2b:b1:4f", 0),
				},
			},
		},
		{
			file: "synthetic-activebackup-6.1-arp.txt",
			want: Bond{
				Name:            "bond0",
				DriverVersion:   new("6.1.0-28-amd64"),
				Mode:            new(ModeActiveBackup),
				FailOverMAC:     new("follow"),
				Primary:         new("eth0"),
				PrimaryReselect: new("better"),
				ActiveSlave:     new("eth1"),
				MIIStatus:       new("up"),
				MIIMonMs:        new(0),
				UpDelayMs:       new(0),
				DownDelayMs:     new(0),
				PeerNotifyMs:    new(0),
				ARPIntervalMs:   new(1000),
				ARPTargets:      []string{"192.168.10.1", "192.168.10.254"},
				Slaves: []Slave{
					procPlainSlave("eth0", "down", new(1000), new("full"), 3, "52:54:00:aa:00:01", 0),
					procPlainSlave("eth1", "up", new(1000), new("full"), 0, "52:54:00:aa:00:02", 0),
				},
			},
			unknown: []string{"ARP Missed Max: 2", "NS IPv6 target/s (xx::xx form):"},
		},
		{
			file: "synthetic-activebackup-5.14-ipoib.txt",
			want: Bond{
				Name:          "bond0",
				DriverVersion: new("5.14.0-503.11.1.el9_5.x86_64"),
				Mode:          new(ModeActiveBackup),
				FailOverMAC:   new("active"),
				ActiveSlave:   new("ib0"),
				MIIStatus:     new("up"),
				MIIMonMs:      new(100),
				UpDelayMs:     new(100),
				DownDelayMs:   new(100),
				PeerNotifyMs:  new(0),
				Slaves: []Slave{
					procPlainSlave("ib0", "up", new(100000), new("full"), 0, "00:00:10:29:fe:80:00:00:00:00:00:00:b8:ce:f6:03:00:1c:2f:4a", 0),
					procPlainSlave("ib1", "up", new(100000), new("full"), 0, "00:00:10:29:fe:80:00:00:00:00:00:00:b8:ce:f6:03:00:1c:2f:4b", 0),
				},
			},
		},
		{
			file: "balancerr-6.15rc1-miimon0.txt",
			want: Bond{
				Name:          "bond0",
				DriverVersion: new("6.15.0-rc1"),
				Mode:          new(ModeRoundRobin),
				MIIStatus:     new("up"),
				MIIMonMs:      new(0),
				UpDelayMs:     new(0),
				DownDelayMs:   new(0),
				PeerNotifyMs:  new(0),
				Slaves: []Slave{
					procPlainSlave("ixgbe-x520-1", "up", new(10000), new("full"), 0, "6c:b3:11:08:5c:3c", 0),
					procPlainSlave("ixgbe-x520-2", "up", new(10000), new("full"), 0, "6c:b3:11:08:5c:3e", 0),
				},
			},
		},
		{
			file: "synthetic-balancexor-6.6-arp-ns.txt",
			want: Bond{
				Name:           "bond0",
				DriverVersion:  new("6.6.32"),
				Mode:           new(ModeXOR),
				XmitHashPolicy: new("vlan+srcmac"),
				MIIStatus:      new("up"),
				MIIMonMs:       new(0),
				UpDelayMs:      new(0),
				DownDelayMs:    new(0),
				PeerNotifyMs:   new(0),
				ARPIntervalMs:  new(500),
				ARPTargets:     []string{"10.0.0.1"},
				Slaves: []Slave{
					procPlainSlave("enp1s0", "up", new(25000), new("full"), 0, "b8:ce:f6:01:02:03", 0),
					procPlainSlave("enp2s0", "up", new(25000), new("full"), 1, "b8:ce:f6:01:02:04", 0),
				},
			},
			unknown: []string{"ARP Missed Max: 3", "NS IPv6 target/s (xx::xx form): 2001:db8::1, fe80::5054:ff:fe00:1"},
		},
		{
			file: "synthetic-broadcast-6.6.txt",
			want: Bond{
				Name:          "bond0",
				DriverVersion: new("6.6.32"),
				Mode:          new(ModeBroadcast),
				MIIStatus:     new("up"),
				MIIMonMs:      new(200),
				UpDelayMs:     new(400),
				DownDelayMs:   new(600),
				PeerNotifyMs:  new(200),
				Slaves: []Slave{
					procPlainSlave("eth0", "up", new(100), new("half"), 0, "00:16:3e:00:00:01", 1),
					procPlainSlave("eth1", "going down", new(100), new("full"), 7, "00:16:3e:00:00:02", 2),
				},
			},
		},
		{
			file: "synthetic-balancetlb-6.6.txt",
			want: Bond{
				Name:           "bond0",
				DriverVersion:  new("6.6.32"),
				Mode:           new(ModeTLB),
				XmitHashPolicy: new("layer3+4"),
				ActiveSlave:    new("eth0"),
				MIIStatus:      new("up"),
				MIIMonMs:       new(100),
				UpDelayMs:      new(0),
				DownDelayMs:    new(0),
				PeerNotifyMs:   new(0),
				Slaves: []Slave{
					procPlainSlave("eth0", "up", new(1000), new("full"), 0, "00:25:90:aa:bb:01", 0),
					procPlainSlave("eth1", "up", new(1000), new("full"), 0, "00:25:90:aa:bb:02", 0),
					procPlainSlave("eth2", "down", nil, nil, 5, "00:25:90:aa:bb:03", 0),
				},
			},
		},
		{
			file: "synthetic-balancealb-4.19.txt",
			want: Bond{
				Name:            "bond0",
				DriverVersion:   new("4.19.0-27-amd64"),
				Mode:            new(ModeALB),
				Primary:         new("eth1"),
				PrimaryReselect: new("failure"),
				MIIStatus:       new("down"),
				MIIMonMs:        new(100),
				UpDelayMs:       new(200),
				DownDelayMs:     new(0),
				Slaves: []Slave{
					procPlainSlave("eth1", "down", nil, nil, 1, "00:1b:21:3c:9d:10", 0),
				},
			},
		},
	}
}

// procCmp compares bonds field by field; Counters have unexported fields
// and must stay empty (the file has none).
var procCmp = cmp.AllowUnexported(Counters{})

func readProcFixture(t testing.TB, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(procDir, file))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParseProcFixtures(t *testing.T) {
	cases := procCases()
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			got, unknown, err := ParseProc("bond0", readProcFixture(t, tc.file))
			if err != nil {
				t.Fatalf("ParseProc: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, procCmp); diff != "" {
				t.Errorf("bond (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.unknown, unknown); diff != "" {
				t.Errorf("unknown lines (-want +got):\n%s", diff)
			}
			checkProcInvariants(t, got, unknown)
		})
	}

	// A fixture without expected values would only be fuzzed, not checked.
	files, err := filepath.Glob(filepath.Join(procDir, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !slices.ContainsFunc(cases, func(c procCase) bool { return c.file == filepath.Base(f) }) {
			t.Errorf("%s has no expected values in procCases", f)
		}
	}
}

func TestParseProcNotBonding(t *testing.T) {
	for _, in := range []string{
		"",
		" \n\t\r\n",
		"\ufeff",
		"Ethernet Channel Bonding Driver: v6.8.0\n\n",
		"Inter-|   Receive                                                |  Transmit\n face |bytes    packets errs drop fifo frame compressed multicast|bytes\n    lo:  1000      10    0    0    0     0          0         0     1000\n",
		"bonding mode: 802.3ad\n", // keys are the kernel's, case and all
		"\x00\x01\x02",
	} {
		b, unknown, err := ParseProc("bond7", []byte(in))
		if !errors.Is(err, ErrNotBondingFile) {
			t.Errorf("ParseProc(%q) error = %v, want ErrNotBondingFile", in, err)
		}
		if err != nil && !strings.Contains(err.Error(), "bond7") {
			t.Errorf("ParseProc(%q) error %q does not name the bond", in, err)
		}
		if diff := cmp.Diff(Bond{Name: "bond7"}, b, procCmp); diff != "" || unknown != nil {
			t.Errorf("ParseProc(%q) on error gave %+v, %q; want only the name", in, b, unknown)
		}
	}

	// Either line alone makes a bonding file, however little else it says.
	for in, slaves := range map[string]int{
		"Bonding Mode: load balancing (round-robin)": 0,
		"Slave Interface: eth0":                      1,
		"Bonding Mode: some future mode\n":           0,
	} {
		b, _, err := ParseProc("bond0", []byte(in))
		if err != nil || len(b.Slaves) != slaves {
			t.Errorf("ParseProc(%q) = %d slaves, %v; want %d slaves, no error", in, len(b.Slaves), err, slaves)
		}
	}
}

// TestParseProcModes checks the mapping of every MODENAME to the kernel's
// word, and that LACP is set for 802.3ad only.
func TestParseProcModes(t *testing.T) {
	for name, want := range map[string]string{
		"load balancing (round-robin)":          ModeRoundRobin,
		"fault-tolerance (active-backup)":       ModeActiveBackup,
		"load balancing (xor)":                  ModeXOR,
		"fault-tolerance (broadcast)":           ModeBroadcast,
		"IEEE 802.3ad Dynamic link aggregation": Mode8023AD,
		"transmit load balancing":               ModeTLB,
		"adaptive load balancing":               ModeALB,
	} {
		b, unknown, err := ParseProc("bond0", []byte("Bonding Mode: "+name+"\n"))
		if err != nil || unknown != nil || b.Mode == nil || *b.Mode != want {
			t.Errorf("mode %q: got %v, %q, %v; want %q", name, b.Mode, unknown, err, want)
			continue
		}
		if (b.LACP != nil) != (want == Mode8023AD) {
			t.Errorf("mode %q: LACP = %+v", name, b.LACP)
		}
	}
}

// procEdit returns the healthy fixture with the first line equal to from
// (after trimming) replaced by to, which may hold several lines.
func procEdit(t *testing.T, from, to string) string {
	t.Helper()
	lines := strings.Split(string(readProcFixture(t, "8023ad-6.8-healthy-root.txt")), "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == from {
			lines[i] = to
			return strings.Join(lines, "\n")
		}
	}
	t.Fatalf("fixture has no line %q", from)
	return ""
}

// TestParseProcGarbled feeds values that do not parse: the field stays nil,
// the line goes to unknown, every other field is as in the healthy file.
func TestParseProcGarbled(t *testing.T) {
	for _, tc := range []struct {
		from, to string
		// clear sets in the healthy bond what the bad value loses.
		clear func(b *Bond)
	}{
		{"MII Polling Interval (ms): 100", "MII Polling Interval (ms): abc", func(b *Bond) { b.MIIMonMs = nil }},
		{"Up Delay (ms): 0", "Up Delay (ms): 1.5", func(b *Bond) { b.UpDelayMs = nil }},
		{"Down Delay (ms): 0", "Down Delay (ms): 99999999999999999999", func(b *Bond) { b.DownDelayMs = nil }},
		{"Ethernet Channel Bonding Driver: v6.8.0-142-generic", "Ethernet Channel Bonding Driver: 6.8", func(b *Bond) { b.DriverVersion = nil }},
		{"Bonding Mode: IEEE 802.3ad Dynamic link aggregation", "Bonding Mode: IEEE 802.3ad Static link aggregation", func(b *Bond) { b.Mode = nil }},
		{"Transmit Hash Policy: layer2+3 (2)", "Transmit Hash Policy: layer2+3 (two)", func(b *Bond) { b.XmitHashPolicy = nil }},
		{"Transmit Hash Policy: layer2+3 (2)", "Transmit Hash Policy: layer2+3 (2", func(b *Bond) { b.XmitHashPolicy = nil }},
		{"Transmit Hash Policy: layer2+3 (2)", "Transmit Hash Policy:", func(b *Bond) { b.XmitHashPolicy = nil }},
		{"MII Status: up", "MII Status:", func(b *Bond) { b.MIIStatus = nil }},
		{"LACP active: on", "LACP active: maybe", func(b *Bond) { b.LACP.Active = nil }},
		{"Min links: 0", "Min links: none", func(b *Bond) { b.LACP.MinLinks = nil }},
		{"System MAC address: 02:1d:22:fd:7e:72", "System MAC address: 02:1d:22:fd:7e:7", func(b *Bond) { b.LACP.SystemMAC = nil }},
		{"Partner Mac Address: 02:fc:ce:91:32:14", "Partner Mac Address: 02-fc-ce-91-32-14", func(b *Bond) { b.LACP.PartnerMAC = nil }},
		{"Speed: 10000 Mbps", "Speed: 10 Gbps", func(b *Bond) { b.Slaves[0].SpeedMbps = nil }},
		{"Speed: 10000 Mbps", "Speed: fast Mbps", func(b *Bond) { b.Slaves[0].SpeedMbps = nil }},
		{"Link Failure Count: 1", "Link Failure Count:", func(b *Bond) { b.Slaves[0].LinkFailureCount = nil }},
		{"Permanent HW addr: 02:1d:22:fd:7e:72", "Permanent HW addr: zz:1d:22:fd:7e:72", func(b *Bond) { b.Slaves[0].PermHWAddr = nil }},
		{"Aggregator ID: 1", "Aggregator ID: one", func(b *Bond) { b.LACP.AggregatorID = nil }},
		{"port state: 63", "port state: 300", func(b *Bond) { b.Slaves[0].Actor.PortState = nil }},
		{"port state: 63", "port state: -1", func(b *Bond) { b.Slaves[0].Actor.PortState = nil }},
		{"port key: 15", "port key: 0x0f", func(b *Bond) { b.Slaves[0].Actor.Key = nil }},
	} {
		t.Run(tc.to, func(t *testing.T) {
			got, unknown, err := ParseProc("bond0", []byte(procEdit(t, tc.from, tc.to)))
			if err != nil {
				t.Fatal(err)
			}
			want := procHealthy()
			tc.clear(&want)
			if diff := cmp.Diff(want, got, procCmp); diff != "" {
				t.Errorf("bond (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{tc.to}, unknown); diff != "" {
				t.Errorf("unknown lines (-want +got):\n%s", diff)
			}
			checkProcInvariants(t, got, unknown)
		})
	}
}

// TestParseProcOddLines covers lines that are not simply a bad value.
func TestParseProcOddLines(t *testing.T) {
	t.Run("unknown keys everywhere", func(t *testing.T) {
		in := procEdit(t, "Peer Notification Delay (ms): 0", "Peer Notification Delay (ms): 0\nFuture Bond Knob (ms): 5 ")
		in = strings.Replace(in, "Partner Churned Count: 0\n", "Partner Churned Count: 0\n  Slave Future: x\n", 1)
		// A new line inside a details block keeps the block open: the
		// lines after it still belong to the actor.
		in = strings.Replace(in, "    port key: 15\n", "    port key: 15\n    port colour: blue\n", 1)
		in = strings.Replace(in, "details partner lacp pdu:\n", "details partner lacp pdu:\n\tsomething new\n", 1)
		got, unknown, err := ParseProc("bond0", []byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(procHealthy(), got, procCmp); diff != "" {
			t.Errorf("bond (-want +got):\n%s", diff)
		}
		want := []string{"Future Bond Knob (ms): 5", "Slave Future: x", "port colour: blue", "something new"}
		if diff := cmp.Diff(want, unknown); diff != "" {
			t.Errorf("unknown lines (-want +got):\n%s", diff)
		}
	})

	t.Run("byte order mark and old Mac line ends", func(t *testing.T) {
		in := "\ufeff" + strings.ReplaceAll(string(readProcFixture(t, "8023ad-6.8-healthy-root.txt")), "\n", "\r")
		got, unknown, err := ParseProc("bond0", []byte(in))
		if err != nil || unknown != nil {
			t.Fatal(err, unknown)
		}
		if diff := cmp.Diff(procHealthy(), got, procCmp); diff != "" {
			t.Errorf("bond (-want +got):\n%s", diff)
		}
	})

	t.Run("slave lines before any slave, bond lines after", func(t *testing.T) {
		in := "Bonding Mode: load balancing (round-robin)\nSpeed: 1000 Mbps\n\nSlave Interface: eth0\nUp Delay (ms): 5\nport state: 63\n"
		got, unknown, err := ParseProc("bond0", []byte(in))
		if err != nil {
			t.Fatal(err)
		}
		want := Bond{Name: "bond0", Mode: new(ModeRoundRobin), Slaves: []Slave{{Name: "eth0"}}}
		if diff := cmp.Diff(want, got, procCmp); diff != "" {
			t.Errorf("bond (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"Speed: 1000 Mbps", "Up Delay (ms): 5", "port state: 63"}, unknown); diff != "" {
			t.Errorf("unknown lines (-want +got):\n%s", diff)
		}
	})

	t.Run("LACP lines outside 802.3ad", func(t *testing.T) {
		in := "Bonding Mode: fault-tolerance (active-backup)\nLACP rate: fast\nbond bond0 has no active aggregator\n"
		got, unknown, err := ParseProc("bond0", []byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if got.LACP != nil {
			t.Errorf("LACP = %+v, want nil outside 802.3ad", got.LACP)
		}
		if diff := cmp.Diff([]string{"LACP rate: fast", "bond bond0 has no active aggregator"}, unknown); diff != "" {
			t.Errorf("unknown lines (-want +got):\n%s", diff)
		}
	})

	t.Run("802.3ad info block with another mode", func(t *testing.T) {
		// Not something a kernel prints, but the block itself is what
		// makes LACP non-nil.
		in := "Bonding Mode: load balancing (xor)\n\n802.3ad info\nLACP rate: slow\n"
		got, unknown, err := ParseProc("bond0", []byte(in))
		if err != nil || unknown != nil {
			t.Fatal(err, unknown)
		}
		if got.LACP == nil || got.LACP.Rate == nil || *got.LACP.Rate != "slow" {
			t.Errorf("LACP = %+v, want rate slow", got.LACP)
		}
	})

	t.Run("empty slave name", func(t *testing.T) {
		// The lines of a nameless slave must not land on the slave before.
		in := "Bonding Mode: load balancing (round-robin)\n\nSlave Interface: eth0\nMII Status: up\n\nSlave Interface:\nMII Status: down\nSpeed: 10 Mbps\n"
		got, unknown, err := ParseProc("bond0", []byte(in))
		if err != nil {
			t.Fatal(err)
		}
		want := Bond{Name: "bond0", Mode: new(ModeRoundRobin), Slaves: []Slave{{Name: "eth0", MIIStatus: new("up")}}}
		if diff := cmp.Diff(want, got, procCmp); diff != "" {
			t.Errorf("bond (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"Slave Interface:", "MII Status: down", "Speed: 10 Mbps"}, unknown); diff != "" {
			t.Errorf("unknown lines (-want +got):\n%s", diff)
		}
	})

	t.Run("slave printed twice", func(t *testing.T) {
		in := "Bonding Mode: load balancing (round-robin)\n\nSlave Interface: eth0\nMII Status: up\n\nSlave Interface: eth1\n\nSlave Interface: eth0\nMII Status: down\nLink Failure Count: 2\n"
		got, unknown, err := ParseProc("bond0", []byte(in))
		if err != nil || unknown != nil {
			t.Fatal(err, unknown)
		}
		want := Bond{Name: "bond0", Mode: new(ModeRoundRobin), Slaves: []Slave{
			{Name: "eth0", MIIStatus: new("down"), LinkFailureCount: new(2)},
			{Name: "eth1"},
		}}
		if diff := cmp.Diff(want, got, procCmp); diff != "" {
			t.Errorf("bond (-want +got):\n%s", diff)
		}
	})

	t.Run("two files concatenated", func(t *testing.T) {
		first := readProcFixture(t, "activebackup-6.12-debian-speed-unknown.txt")
		second := readProcFixture(t, "balancerr-6.15rc1-miimon0.txt")
		got, unknown, err := ParseProc("bond0", append(append([]byte{}, first...), second...))
		if err != nil {
			t.Fatal(err)
		}
		want := procCases()[slices.IndexFunc(procCases(), func(c procCase) bool {
			return c.file == "activebackup-6.12-debian-speed-unknown.txt"
		})].want
		if diff := cmp.Diff(want, got, procCmp); diff != "" {
			t.Errorf("bond (-want +got):\n%s", diff)
		}
		if len(unknown) == 0 || unknown[0] != "Ethernet Channel Bonding Driver: v6.15.0-rc1" || slices.Contains(unknown, "") {
			t.Errorf("unknown lines = %q, want the second file's lines", unknown)
		}
	})

	t.Run("values the kernel prints for nothing", func(t *testing.T) {
		in := "Bonding Mode: IEEE 802.3ad Dynamic link aggregation\n" +
			"Primary Slave: None\nCurrently Active Slave: None\n" +
			"ARP Polling Interval (ms): 100\nARP IP target/s (n.n.n.n form):\n" +
			"\nSlave Interface: eth0\nSpeed: Unknown\nDuplex: unknown\nAggregator ID: N/A\nPermanent HW addr:\n"
		got, unknown, err := ParseProc("bond0", []byte(in))
		if err != nil || unknown != nil {
			t.Fatal(err, unknown)
		}
		want := Bond{
			Name: "bond0", Mode: new(Mode8023AD), LACP: &LACP{},
			ARPIntervalMs: new(100), ARPTargets: []string{},
			Slaves: []Slave{{Name: "eth0"}},
		}
		if diff := cmp.Diff(want, got, procCmp); diff != "" {
			t.Errorf("bond (-want +got):\n%s", diff)
		}
		if got.ARPTargets == nil {
			t.Errorf("ARPTargets is nil; want empty: the monitor is on, with no target")
		}
	})

	t.Run("ARP target list with a bad address", func(t *testing.T) {
		line := "ARP IP target/s (n.n.n.n form): 10.0.0.1, 10.0.0.300"
		got, unknown, err := ParseProc("bond0", []byte("Bonding Mode: load balancing (xor)\n"+line+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		if got.ARPTargets != nil || !slices.Equal(unknown, []string{line}) {
			t.Errorf("ARPTargets = %q, unknown = %q; want nil and the line", got.ARPTargets, unknown)
		}
	})

	t.Run("bad fail_over_mac keeps the mode", func(t *testing.T) {
		line := "Bonding Mode: fault-tolerance (active-backup) (fail_over_mac"
		got, unknown, err := ParseProc("bond0", []byte(line))
		if err != nil {
			t.Fatal(err)
		}
		if got.Mode == nil || *got.Mode != ModeActiveBackup || got.FailOverMAC != nil || !slices.Equal(unknown, []string{line}) {
			t.Errorf("Mode %v, FailOverMAC %v, unknown %q", got.Mode, got.FailOverMAC, unknown)
		}
	})

	t.Run("aggregator lines: last one wins", func(t *testing.T) {
		in := "Bonding Mode: IEEE 802.3ad Dynamic link aggregation\nActive Aggregator Info:\n\tAggregator ID: 3\nbond bond0 has no active aggregator\n"
		got, _, _ := ParseProc("bond0", []byte(in))
		if !got.LACP.NoActiveAggregator || got.LACP.AggregatorID != nil {
			t.Errorf("LACP = %+v; want no active aggregator and no ID", got.LACP)
		}
	})
}

// TestParseProcJSON checks that a parsed bond marshals, and that the wire
// names the kernel's words (port_key, oper_key, port state flags).
func TestParseProcJSON(t *testing.T) {
	for _, tc := range procCases() {
		got, _, err := ParseProc("bond0", readProcFixture(t, tc.file))
		if err != nil {
			t.Fatal(err)
		}
		data, err := json.Marshal(got)
		if err != nil {
			t.Fatalf("%s: marshal: %v", tc.file, err)
		}
		var back map[string]any
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("%s: unmarshal: %v", tc.file, err)
		}
		if back["name"] != "bond0" || len(back["slaves"].([]any)) != len(tc.want.Slaves) {
			t.Errorf("%s: JSON %s", tc.file, data)
		}
	}

	got, _, _ := ParseProc("bond0", readProcFixture(t, "8023ad-5.10-churned-nopartner-root.txt"))
	data, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Mode string `json:"mode"`
		LACP struct {
			AggregatorID int  `json:"aggregator_id"`
			Active       *any `json:"active"`
		} `json:"lacp"`
		Slaves []struct {
			Actor   map[string]any `json:"actor"`
			Partner map[string]any `json:"partner"`
		} `json:"slaves"`
	}
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.Mode != "802.3ad" || back.LACP.AggregatorID != 2 || back.LACP.Active != nil {
		t.Errorf("JSON %s", data)
	}
	a, p := back.Slaves[1].Actor, back.Slaves[1].Partner
	if a["port_key"] != 23.0 || a["port_state"] != 77.0 || p["oper_key"] != 1.0 || p["system_mac"] != "00:00:00:00:00:00" {
		t.Errorf("actor %v, partner %v", a, p)
	}
	flags := a["port_state_flags"].([]any)
	if !reflect.DeepEqual(flags, []any{"activity", "aggregation", "synchronization", "defaulted"}) {
		t.Errorf("port_state_flags of 77 = %v", flags)
	}
}

// checkProcInvariants checks what holds for every successful parse,
// whatever the input: the fuzz target and the table tests share it.
func checkProcInvariants(t testing.TB, b Bond, unknown []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, s := range b.Slaves {
		if s.Name == "" || strings.TrimSpace(s.Name) != s.Name || strings.ContainsAny(s.Name, "\r\n") {
			t.Errorf("slave name %q", s.Name)
		}
		if seen[s.Name] {
			t.Errorf("slave %q twice", s.Name)
		}
		seen[s.Name] = true
		if !s.Counters.Empty() || s.State != nil || s.MTU != nil || s.OperState != nil {
			t.Errorf("slave %q has fields the file does not give: %+v", s.Name, s)
		}
	}
	for _, l := range unknown {
		if l == "" || strings.TrimSpace(l) != l || strings.ContainsAny(l, "\r\n") {
			t.Errorf("unknown line %q", l)
		}
	}
	if b.Mode != nil && !slices.Contains(Modes[:], *b.Mode) {
		t.Errorf("mode %q is not the kernel's word", *b.Mode)
	}
	if b.Is8023AD() && b.LACP == nil {
		t.Errorf("802.3ad bond without LACP")
	}
	if b.LACP != nil && b.LACP.NoActiveAggregator && b.LACP.AggregatorID != nil {
		t.Errorf("no active aggregator, yet aggregator ID %d", *b.LACP.AggregatorID)
	}
	if b.MTU != nil || b.OperState != nil || b.TLBDynamicLB != nil || !b.Counters.Empty() {
		t.Errorf("bond has fields the file does not give")
	}
	for _, a := range b.ARPTargets {
		if a == "" || strings.ContainsAny(a, " ,") {
			t.Errorf("ARP target %q", a)
		}
	}
	// Walk every pointer: strings are non-empty and trimmed, and no two
	// fields share a pointer.
	ptrs := map[uintptr]string{}
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() {
				return
			}
			if other, ok := ptrs[v.Pointer()]; ok {
				t.Errorf("%s and %s share a pointer", other, path)
			}
			ptrs[v.Pointer()] = path
			if s, ok := v.Interface().(*string); ok && (*s == "" || strings.TrimSpace(*s) != *s || strings.ContainsAny(*s, "\r\n")) {
				t.Errorf("%s = %q", path, *s)
			}
			walk(v.Elem(), path)
		case reflect.Struct:
			for i := range v.NumField() {
				if f := v.Type().Field(i); f.IsExported() {
					walk(v.Field(i), path+"."+f.Name)
				}
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i), path+"["+strconv.Itoa(i)+"]")
			}
		}
	}
	walk(reflect.ValueOf(b), "Bond")
	if _, err := json.Marshal(b); err != nil {
		t.Errorf("marshal: %v", err)
	}
}

// BenchmarkParseProc parses a 4-slave 802.3ad file as root reads it on
// 6.x, with the details blocks: the largest common case, read every tick.
func BenchmarkParseProc(b *testing.B) {
	data := readProcFixture(b, "synthetic-8023ad-6.8-4slaves-root.txt")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ParseProc("bond0", data); err != nil {
			b.Fatal(err)
		}
	}
}

// TestParseProcReportGarbledVersusUnknown: a known key with a bad value is
// damage (a warning); a key the parser does not know is a newer kernel.
func TestParseProcReportGarbledVersusUnknown(t *testing.T) {
	in := "Bonding Mode: load balancing (xor)\nMII Polling Interval (ms): abc\nShiny New Option: 7\n\nSlave Interface: eth0\nLink Failure Count: -x\n"
	b, notes, err := ParseProcReport("bond0", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if b.MIIMonMs != nil || len(b.Slaves) != 1 || b.Slaves[0].LinkFailureCount != nil {
		t.Fatalf("garbled fields must be nil: %+v", b)
	}
	wantGarbled := []string{"MII Polling Interval (ms): abc", "Link Failure Count: -x"}
	if !slices.Equal(notes.Garbled, wantGarbled) {
		t.Errorf("garbled = %q, want %q", notes.Garbled, wantGarbled)
	}
	wantAll := []string{"MII Polling Interval (ms): abc", "Shiny New Option: 7", "Link Failure Count: -x"}
	if !slices.Equal(notes.Unparsed, wantAll) {
		t.Errorf("unparsed = %q, want %q", notes.Unparsed, wantAll)
	}
}
