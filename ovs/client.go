package ovs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/bondtop/bondtop/internal/filekind"
)

// DefaultRunDir is where Debian, Ubuntu and RHEL packages put the sockets.
const DefaultRunDir = "/var/run/openvswitch"

// DefaultRebalanceMs is OVS's bond-rebalance-interval when other_config
// does not set one.
const DefaultRebalanceMs = 10000

// Bond is one Open vSwitch bond: a Port row with two or more interfaces,
// with what ovs-vswitchd says about it.
type Bond struct {
	Name   string
	Bridge string
	// Mode is OVS's word: active-backup, balance-slb or balance-tcp.
	Mode string
	// LACP is the configured mode: active, passive or off.
	LACP string
	// LACPTime is slow or fast (other_config:lacp-time).
	LACPTime string
	// LACPStatus is bond/show's lacp_status: negotiated, configured or
	// off; empty when ovs-vswitchd could not be asked.
	LACPStatus  string
	FallbackAB  bool
	UpDelayMs   int
	DownDelayMs int
	// RebalanceMs is bond-rebalance-interval; 0 turns rebalancing off.
	RebalanceMs  int
	ActiveMember string
	// SysID, SysPriority and AggregationKey are the actor's LACP system
	// (from lacp/show); empty without LACP.
	SysID          string
	SysPriority    int
	AggregationKey int
	Members        []Member
}

// Member is one interface of a bond.
type Member struct {
	Name        string
	IfIndex     *int64
	OFPort      *int64
	LinkState   string
	AdminState  string
	LACPCurrent *bool
	LinkSpeed   *int64 // bits per second
	MAC         string
	Statistics  map[string]int64
	// From bond/show; Known is false when ovs-vswitchd was not asked.
	Known     bool
	Enabled   bool
	MayEnable bool
	Active    bool
	Buckets   []Bucket
	// LACP is the member's lacp/show block, nil without LACP.
	LACP      *LACPMemberShow
	LACPStats *LACPStats
}

// Host is what one Read saw.
type Host struct {
	Bonds []Bond
	// VswitchdErr says why bond/show or lacp/show could not be read (the
	// bonds then carry only what OVSDB knows).
	VswitchdErr error
}

// Bond returns the bond called name, or nil.
func (h *Host) Bond(name string) *Bond {
	for i := range h.Bonds {
		if h.Bonds[i].Name == name {
			return &h.Bonds[i]
		}
	}
	return nil
}

// Client reads OVS bonds from the sockets under one run directory. It
// keeps both connections open between reads and redials after an error.
// Safe for use by one goroutine at a time; Read serialises callers.
type Client struct {
	RunDir string

	mu  sync.Mutex
	db  *rpcConn
	ctl *rpcConn
}

// NewClient returns a client for rundir ("" means DefaultRunDir). It does
// not connect until the first Read.
func NewClient(rundir string) *Client {
	if rundir == "" {
		rundir = DefaultRunDir
	}
	return &Client{RunDir: rundir}
}

// DBSocket is ovsdb-server's socket under the run directory.
func (c *Client) DBSocket() string { return filepath.Join(c.RunDir, "db.sock") }

// ControlSocket finds ovs-vswitchd's control socket the way ovs-appctl
// does: ovs-vswitchd.<pid>.ctl, the pid read from ovs-vswitchd.pid.
func (c *Client) ControlSocket() (string, error) {
	pidfile := filepath.Join(c.RunDir, "ovs-vswitchd.pid")
	b, err := readPidfile(pidfile)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("ovs-vswitchd is not running here (%w); is --ovs-rundir right?", err)
	}
	if err != nil {
		return "", err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return "", fmt.Errorf("%s: %q is not a process id", pidfile, strings.TrimSpace(string(b)))
	}
	return filepath.Join(c.RunDir, fmt.Sprintf("ovs-vswitchd.%d.ctl", pid)), nil
}

// maxPidfile bounds what is read of a pidfile: a pid and a newline.
const maxPidfile = 32

// readPidfile reads a pidfile that can be anything a root-owned run
// directory holds after a mistake or an attack: only a regular file is
// read (a FIFO would block, the zero device never end), opened without
// blocking, and at most maxPidfile bytes of it. See docs/security.md.
func readPidfile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a pidfile", path, filekind.Of(st.Mode()))
	}
	b, err := io.ReadAll(io.LimitReader(f, maxPidfile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > maxPidfile {
		return nil, fmt.Errorf("%s is over %d bytes, not a pidfile", path, maxPidfile)
	}
	return b, nil
}

// Close drops both connections.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drop()
	return nil
}

func (c *Client) drop() {
	if c.db != nil {
		c.db.Close()
		c.db = nil
	}
	if c.ctl != nil {
		c.ctl.Close()
		c.ctl = nil
	}
}

// ReadDB returns the Bridge, Port and Interface rows.
func (c *Client) ReadDB(ctx context.Context) (*DB, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readDB(ctx)
}

func (c *Client) readDB(ctx context.Context) (*DB, error) {
	if c.db == nil {
		conn, err := dialRPC(ctx, c.DBSocket(), maxMessage)
		if err != nil {
			return nil, socketError("ovsdb-server", c.DBSocket(), err)
		}
		c.db = conn
	}
	db, err := readDB(ctx, c.db)
	if err != nil {
		c.db.Close()
		c.db = nil
	}
	return db, err
}

// Appctl runs one unixctl command on ovs-vswitchd and returns its text.
func (c *Client) Appctl(ctx context.Context, command string, args ...string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.appctl(ctx, command, args...)
}

func (c *Client) appctl(ctx context.Context, command string, args ...string) (string, error) {
	if c.ctl == nil {
		path, err := c.ControlSocket()
		if err != nil {
			return "", err
		}
		conn, err := dialRPC(ctx, path, maxCtlMessage)
		if err != nil {
			return "", socketError("ovs-vswitchd", path, err)
		}
		c.ctl = conn
	}
	if args == nil {
		args = []string{}
	}
	res, err := c.ctl.call(ctx, command, args)
	if err != nil {
		var rpcErr *RPCError
		if !errors.As(err, &rpcErr) {
			c.ctl.Close()
			c.ctl = nil
		}
		return "", err
	}
	var text string
	if err := json.Unmarshal(res, &text); err != nil {
		return "", fmt.Errorf("%s: the reply is not text", command)
	}
	return text, nil
}

// socketError says what to do when a socket cannot be opened.
func socketError(daemon, path string, err error) error {
	if errors.Is(err, os.ErrPermission) {
		return fmt.Errorf("%s socket %s: %w (reading OVS needs root)", daemon, path, err)
	}
	return fmt.Errorf("%s socket %s: %w (is %s running? is --ovs-rundir right?)", daemon, path, err, daemon)
}

// Read returns every OVS bond on the host: OVSDB's configuration and
// interface state, then ovs-vswitchd's bond/show, lacp/show and
// lacp/show-stats. Without OVSDB it fails; without ovs-vswitchd the bonds
// carry OVSDB's part and Host.VswitchdErr says why.
func (c *Client) Read(ctx context.Context) (*Host, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	db, err := c.readDB(ctx)
	if err != nil {
		return nil, err
	}
	h := &Host{Bonds: BondsFromDB(db)}
	if len(h.Bonds) == 0 {
		return h, nil
	}
	var texts [3]string
	for i, cmd := range []string{"bond/show", "lacp/show", "lacp/show-stats"} {
		texts[i], err = c.appctl(ctx, cmd)
		var rpcErr *RPCError
		if err != nil && cmd == "lacp/show-stats" && errors.As(err, &rpcErr) {
			texts[i] = "" // older releases have no lacp/show-stats
			continue
		}
		if err != nil {
			h.VswitchdErr = err
			return h, nil
		}
	}
	h.VswitchdErr = h.merge(texts[0], texts[1], texts[2])
	return h, nil
}

// BondsFromDB picks the bonds out of OVSDB's rows: ports with two or more
// interfaces, sorted by bridge and name.
func BondsFromDB(db *DB) []Bond {
	bridgeOf := map[string]string{}
	for _, br := range db.Bridges {
		for _, p := range br.Ports {
			bridgeOf[p] = br.Name
		}
	}
	ifaces := map[string]*InterfaceRow{}
	for i := range db.Interfaces {
		ifaces[db.Interfaces[i].UUID] = &db.Interfaces[i]
	}
	var bonds []Bond
	for _, p := range db.Ports {
		if len(p.Interfaces) < 2 {
			continue
		}
		b := Bond{Name: p.Name, Bridge: bridgeOf[p.UUID], Mode: p.BondMode, LACP: p.LACP,
			UpDelayMs: p.UpDelayMs, DownDelayMs: p.DownDelayMs, RebalanceMs: DefaultRebalanceMs,
			LACPTime: "slow"}
		if b.Mode == "" {
			b.Mode = "active-backup" // OVS's default
		}
		if b.LACP == "" {
			b.LACP = "off"
		}
		if t := p.OtherConfig["lacp-time"]; t != "" {
			b.LACPTime = t
		}
		if n, ok := p.OtherConfigInt("bond-rebalance-interval"); ok {
			b.RebalanceMs = n
		}
		for _, u := range p.Interfaces {
			f := ifaces[u]
			if f == nil {
				continue
			}
			b.Members = append(b.Members, Member{Name: f.Name, IfIndex: f.IfIndex, OFPort: f.OFPort,
				LinkState: f.LinkState, AdminState: f.AdminState, LACPCurrent: f.LACPCurrent,
				LinkSpeed: f.LinkSpeed, MAC: f.MACInUse, Statistics: f.Statistics})
			if p.BondActiveMAC != "" && f.MACInUse == p.BondActiveMAC {
				b.ActiveMember = f.Name
			}
		}
		sort.Slice(b.Members, func(i, j int) bool { return b.Members[i].Name < b.Members[j].Name })
		bonds = append(bonds, b)
	}
	sort.Slice(bonds, func(i, j int) bool {
		if bonds[i].Bridge != bonds[j].Bridge {
			return bonds[i].Bridge < bonds[j].Bridge
		}
		return bonds[i].Name < bonds[j].Name
	})
	return bonds
}

// merge adds ovs-vswitchd's view to the bonds OVSDB gave.
func (h *Host) merge(bondShow, lacpShow, lacpStats string) error {
	shows, err := ParseBondShow(bondShow)
	if err != nil {
		return err
	}
	lacps, err := ParseLACPShow(lacpShow)
	if err != nil {
		return err
	}
	stats, err := ParseLACPStats(lacpStats)
	if err != nil {
		return err
	}
	for _, s := range shows {
		b := h.Bond(s.Name)
		if b == nil {
			continue // configured after our OVSDB read
		}
		b.Mode = s.Mode
		b.LACPStatus = s.LACPStatus
		b.FallbackAB = s.FallbackAB
		b.UpDelayMs, b.DownDelayMs = s.UpDelayMs, s.DownDelayMs
		b.ActiveMember = s.ActiveMember
		for _, ms := range s.Members {
			m := b.member(ms.Name)
			if m == nil {
				continue
			}
			m.Known, m.Enabled, m.MayEnable, m.Active, m.Buckets = true, ms.Enabled, ms.MayEnable, ms.Active, ms.Buckets
		}
	}
	for i := range lacps {
		l := &lacps[i]
		b := h.Bond(l.Name)
		if b == nil {
			continue
		}
		b.SysID, b.SysPriority, b.AggregationKey = l.SysID, l.SysPriority, l.AggregationKey
		if l.LACPTime != "" {
			b.LACPTime = l.LACPTime
		}
		for j := range l.Members {
			if m := b.member(l.Members[j].Name); m != nil {
				m.LACP = &l.Members[j]
			}
		}
	}
	for bond, members := range stats {
		b := h.Bond(bond)
		if b == nil {
			continue
		}
		for name, st := range members {
			if m := b.member(name); m != nil {
				st := st
				m.LACPStats = &st
			}
		}
	}
	return nil
}

func (b *Bond) member(name string) *Member {
	for i := range b.Members {
		if b.Members[i].Name == name {
			return &b.Members[i]
		}
	}
	return nil
}

// HostFromReplies builds a Host from captured replies: the result of
// the OVSDB transaction Read sends, and the texts of bond/show, lacp/show
// and lacp/show-stats. Tests and tools replay fixtures through it.
func HostFromReplies(transact json.RawMessage, bondShow, lacpShow, lacpStats string) (*Host, error) {
	db, err := decodeTransact(transact)
	if err != nil {
		return nil, err
	}
	h := &Host{Bonds: BondsFromDB(db)}
	if err := h.merge(bondShow, lacpShow, lacpStats); err != nil {
		return nil, err
	}
	return h, nil
}
