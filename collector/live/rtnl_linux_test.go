package live

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// libraryLinkDump is vishvananda/netlink's RTM_GETLINK dump, the judge of
// rtnlConn's: each link's ifindex and name.
func libraryLinkDump(t *testing.T) []string {
	t.Helper()
	links, err := netlink.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range links {
		out = append(out, fmt.Sprintf("%d %s", l.Attrs().Index, l.Attrs().Name))
	}
	slices.Sort(out)
	return out
}

// connLinkDump is the same dump through rtnlConn.
func connLinkDump(c *rtnlConn) ([]string, error) {
	var out []string
	err := c.dump(unix.RTM_GETLINK, anyIfInfomsg[:], unix.RTM_NEWLINK, func(msg []byte) {
		link, err := deserializeLink(msg)
		if err != nil {
			out = append(out, err.Error())
			return
		}
		out = append(out, fmt.Sprintf("%d %s", link.Attrs().Index, link.Attrs().Name))
	})
	slices.Sort(out)
	return out, err
}

// TestRtnlConnDump: the live source's own socket sees the links the
// library sees, in datagrams the kernel splits; a receive buffer too small
// for a datagram fails that dump with errReplyTruncated, grows, and leaves
// the socket clean for the next request, which then works.
func TestRtnlConnDump(t *testing.T) {
	inNewNetns(t)
	for i := range 40 { // a dump of several datagrams
		addVeth(t, fmt.Sprintf("va%d", i), fmt.Sprintf("vb%d", i), 1500)
	}
	want := libraryLinkDump(t)
	if len(want) < 81 {
		t.Fatalf("library dump: %d links, want lo and 80 veths", len(want))
	}

	c, err := openRtnl()
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	for range 2 {
		got, err := connLinkDump(c)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("rtnlConn dump:\n%v\nlibrary:\n%v", got, want)
		}
	}

	c.buf = make([]byte, 512) // smaller than one link's message
	if _, err := connLinkDump(c); !errors.Is(err, errReplyTruncated) {
		t.Fatalf("dump into 512 bytes: %v, want errReplyTruncated", err)
	}
	if len(c.buf) <= 512 {
		t.Fatalf("receive buffer still %d bytes", len(c.buf))
	}
	for range 20 { // the grown buffer may meet a larger datagram again
		got, err := connLinkDump(c)
		if errors.Is(err, errReplyTruncated) {
			continue
		}
		if err != nil {
			t.Fatalf("dump after a truncated one: %v", err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("dump after a truncated one:\n%v\nwant:\n%v", got, want)
		}
		return
	}
	t.Fatal("the receive buffer never grew to a datagram's size")
}

// TestRtnlConnGetError: a request the kernel refuses returns its errno,
// and the socket serves the next request.
func TestRtnlConnGetError(t *testing.T) {
	inNewNetns(t)
	c, err := openRtnl()
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = 1 << 30 // no such link
	called := false
	err = c.get(unix.RTM_GETLINK, msg.Serialize(), unix.RTM_NEWLINK, func([]byte) { called = true })
	if !errors.Is(err, unix.ENODEV) || called {
		t.Fatalf("get of a missing link: %v (answered: %v), want ENODEV", err, called)
	}
	msg.Index = 1 // lo
	var name string
	err = c.get(unix.RTM_GETLINK, msg.Serialize(), unix.RTM_NEWLINK, func(b []byte) {
		if l, err := deserializeLink(b); err == nil {
			name = l.Attrs().Name
		}
	})
	if err != nil || name != "lo" {
		t.Fatalf("get of ifindex 1: %q, %v; want lo", name, err)
	}
}

// TestRtnlConnStatsDump: one RTM_GETSTATS dump answers for every link,
// as a request per link does (here without the bonding driver the
// slave statistics are empty: what is compared is which links answer).
func TestRtnlConnStatsDump(t *testing.T) {
	inNewNetns(t)
	for i := range 3 {
		addVeth(t, fmt.Sprintf("va%d", i), fmt.Sprintf("vb%d", i), 1500)
	}
	c, err := openRtnl()
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	var req [12]byte
	binary.NativeEndian.PutUint32(req[8:], 1<<2) // IFLA_STATS_LINK_XSTATS_SLAVE
	var dumped []int
	if err := c.dump(unix.RTM_GETSTATS, req[:], unix.RTM_NEWSTATS, func(msg []byte) {
		dumped = append(dumped, int(binary.NativeEndian.Uint32(msg[4:8])))
	}); err != nil {
		t.Fatal(err)
	}
	links, err := netlink.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	var each []int
	for _, l := range links {
		binary.NativeEndian.PutUint32(req[4:], uint32(l.Attrs().Index))
		if err := c.get(unix.RTM_GETSTATS, req[:], unix.RTM_NEWSTATS, func(msg []byte) {
			each = append(each, int(binary.NativeEndian.Uint32(msg[4:8])))
		}); err != nil {
			t.Fatalf("stats of %s: %v", l.Attrs().Name, err)
		}
	}
	slices.Sort(dumped)
	slices.Sort(each)
	if len(dumped) != 7 || !slices.Equal(dumped, each) {
		t.Fatalf("statistics dump answered for %v, requests for %v; want lo and 6 veths", dumped, each)
	}
}

// FuzzRtnlMessages: splitting a datagram into netlink messages never
// reads past it, and each step consumes bytes.
func FuzzRtnlMessages(f *testing.F) {
	done := make([]byte, 20)
	binary.NativeEndian.PutUint32(done[0:], 20)
	binary.NativeEndian.PutUint16(done[4:], unix.NLMSG_DONE)
	f.Add(append(append([]byte{}, done...), done...))
	f.Add(done[:17])
	f.Add([]byte{16, 0, 0, 0, 1, 0, 2, 0, 3, 0, 0, 0, 4, 0, 0, 0, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		for len(b) > 0 {
			h, msg, rest, err := nextMsg(b)
			if err != nil {
				return
			}
			if int(h.Len) != unix.SizeofNlMsghdr+len(msg) || len(rest) >= len(b) || int(h.Len) > len(b) {
				t.Fatalf("header length %d, payload %d, rest %d of %d", h.Len, len(msg), len(rest), len(b))
			}
			b = rest
		}
	})
}
