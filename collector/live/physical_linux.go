package live

import (
	"errors"
	"sync"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/bonding/module"
	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/model"
	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// physTimeout bounds one ethtool request: a module EEPROM page on a slow
// i2c bus takes tens of milliseconds, a hung one must not stall reads.
const physTimeout = 2 * time.Second

// physConn speaks the "ethtool" generic netlink family for what
// mdlayher/ethtool v0.7.0 lacks: the link's extended state, FEC
// statistics and module EEPROM pages.
type physConn struct {
	mu     sync.Mutex
	c      *genetlink.Conn
	family uint16
	closed bool
}

// openPhysConn opens the family in the calling thread's network
// namespace; an error when the kernel has none (before 5.6).
func openPhysConn() (*physConn, error) {
	c, err := genetlink.Dial(nil)
	if err != nil {
		return nil, err
	}
	f, err := c.GetFamily(unix.ETHTOOL_GENL_NAME)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	return &physConn{c: c, family: f.ID}, nil
}

func (p *physConn) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		_ = p.c.Close()
	}
}

var errPhysClosed = errors.New("ethtool netlink connection closed")

// get sends one request and returns the reply's attributes.
func (p *physConn) get(cmd uint8, body []byte) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errPhysClosed
	}
	_ = p.c.SetDeadline(time.Now().Add(physTimeout))
	msgs, err := p.c.Execute(genetlink.Message{
		Header: genetlink.Header{Command: cmd, Version: unix.ETHTOOL_GENL_VERSION},
		Data:   body,
	}, p.family, netlink.Request)
	if err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		return nil, errors.New("ethtool netlink: empty reply")
	}
	return msgs[0].Data, nil
}

var _ collector.PhysicalReader = (*Source)(nil)

// Physical implements collector.PhysicalReader: three requests, plus one per
// module EEPROM page (two to five) where the driver has a module.
func (s *Source) Physical(slave string) (*model.Physical, bool) {
	return s.phys.read(slave)
}

// read reads one interface; nil when the driver reports nothing.
func (p *physConn) read(name string) (*model.Physical, bool) {
	if p == nil {
		return nil, false
	}
	out := &model.Physical{ReadAt: time.Now()}
	if b, err := p.get(bonding.EthtoolMsgLinkStateGet, bonding.EthtoolLinkStateRequest(name)); err == nil {
		if ls := bonding.ParseEthtoolLinkState(b); ls != (bonding.LinkState{}) {
			out.LinkState = &ls
		}
	}
	if b, err := p.get(bonding.EthtoolMsgFECGet, bonding.EthtoolFECRequest(name)); err == nil {
		f := bonding.ParseEthtoolFEC(b)
		out.FEC = &f
	}
	m, err := module.Decode(func(r module.Request) ([]byte, error) {
		b, err := p.get(bonding.EthtoolMsgModuleEEPROMGet,
			bonding.EthtoolModuleEEPROMRequest(name, r.I2CAddress, r.Page, r.Bank, r.Offset, r.Length))
		if err != nil {
			return nil, err
		}
		data, ok := bonding.ParseEthtoolModuleEEPROM(b)
		if !ok {
			return nil, module.ErrShort
		}
		return data, nil
	})
	needRoot := errors.Is(err, unix.EPERM)
	if err == nil {
		out.Module = m
	}
	if out.Empty() {
		return nil, needRoot
	}
	return out, needRoot
}
