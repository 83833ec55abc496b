package drill

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/bonding"
)

func str(s string) *string { return &s }

func testBond(mode, active string, slaves ...[2]string) *bonding.Bond {
	b := &bonding.Bond{Name: "bond0", Mode: str(mode)}
	if active != "" {
		b.ActiveSlave = str(active)
	}
	for _, s := range slaves {
		b.Slaves = append(b.Slaves, bonding.Slave{Name: s[0], MIIStatus: str(s[1]), OperState: str("up")})
	}
	return b
}

func TestMakePlan(t *testing.T) {
	opts := func(o Options) Options {
		o.Bond, o.Peer = "bond0", "10.0.0.2"
		o, err := o.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	ab := testBond(bonding.ModeActiveBackup, "eth1", [2]string{"eth0", "up"}, [2]string{"eth1", "up"})
	lacp := testBond(bonding.Mode8023AD, "", [2]string{"eth0", "up"}, [2]string{"eth1", "up"}, [2]string{"eth2", "up"})
	lone := testBond(bonding.ModeActiveBackup, "eth0", [2]string{"eth0", "up"}, [2]string{"eth1", "down"})
	for _, c := range []struct {
		name    string
		b       *bonding.Bond
		o       Options
		traffic map[string]uint64
		slave   string
		newAct  string
		err     string
	}{
		{"active-backup defaults to the active slave", ab, opts(Options{}), nil, "eth1", "", ""},
		{"--slave", ab, opts(Options{Slave: "eth0"}), nil, "eth0", "", ""},
		{"no such slave", ab, opts(Options{Slave: "eth9"}), nil, "", "", "eth9 is not a slave of bond0 (slaves: eth0, eth1)"},
		{"802.3ad: the busiest", lacp, opts(Options{}), map[string]uint64{"eth0": 10, "eth2": 99, "eth1": 50}, "eth2", "", ""},
		{"--how active moves to a survivor", ab, opts(Options{How: Active}), nil, "eth1", "eth0", ""},
		{"--how active needs an active slave mode", lacp, opts(Options{How: Active}), nil, "", "", "mode 802.3ad does not have"},
		{"--how active of a backup slave", ab, opts(Options{How: Active, Slave: "eth0"}), nil, "", "", "eth0 is not it (eth1 is)"},
		{"the last usable slave", lone, opts(Options{}), nil, "", "", "eth0 is the last usable slave of bond0 (the others: eth1 mii down)"},
		{"the last usable slave, forced", lone, opts(Options{Force: true}), nil, "eth0", "", ""},
		{"a slave already down", lone, opts(Options{Slave: "eth1"}), nil, "", "", "eth1 is already down"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := MakePlan(c.b, Settings{}, c.o, c.traffic)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Slave != c.slave || p.NewActive != c.newAct {
				t.Errorf("slave %s new active %q, want %s %q", p.Slave, p.NewActive, c.slave, c.newAct)
			}
			if len(p.Steps()) < 2 {
				t.Errorf("steps: %q", p.Steps())
			}
		})
	}
	if _, err := MakePlan(lone, Settings{}, opts(Options{}), nil); !errors.Is(err, ErrRefused) {
		t.Errorf("the last usable slave is not ErrRefused: %v", err)
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, c := range []struct {
		o   Options
		err string
	}{
		{Options{Bond: "bond0", Peer: "h"}, ""},
		{Options{Peer: "h"}, "no bond"},
		{Options{Bond: "bond0"}, "no peer"},
		{Options{Bond: "bond0", Peer: "h", How: "up"}, `--how "up"`},
		{Options{Bond: "bond0", Peer: "h", Direction: "in"}, `--direction "in"`},
		{Options{Bond: "bond0", Peer: "h", Hold: time.Millisecond}, "--hold 1ms"},
		{Options{Bond: "bond0", Peer: "h", Rate: 5}, "rate 5"},
	} {
		err := c.o.Validate()
		if (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.err)
		}
	}
}

// The plan of a --direction rx drill says the host stays silent; the
// others' do not.
func TestDescribeQuiet(t *testing.T) {
	p := &Plan{Bond: "bond0", Mode: "active-backup", Slave: "a0", How: Active, NewActive: "a1", Hold: 3 * time.Second}
	for _, c := range []struct {
		dir  Direction
		want bool
	}{{RX, true}, {Both, false}, {TX, false}} {
		d := &Drill{Plan: p, opts: Options{Direction: c.dir, Rate: 1000, StateDir: DefaultStateDir}}
		if got := strings.Contains(d.Describe(), "this host sends nothing of its own"); got != c.want {
			t.Errorf("--direction %s: quiet line %v, want %v:\n%s", c.dir, got, c.want, d.Describe())
		}
	}
}
