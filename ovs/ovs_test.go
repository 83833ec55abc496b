package ovs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The fixtures in testdata are the replies of the real OVS that
// TestRealOVS starts (captured with make ovs-fixtures): six bonds, bond-a
// and bond-b balance-tcp with LACP across three veth pairs, ab-c and ab-d
// active-backup, slb-e and slb-f balance-slb; the -down files after a1
// and c0 went down.

func fixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func fixtureHost(t testing.TB, bondShow, lacpShow string) *Host {
	t.Helper()
	h, err := HostFromReplies(json.RawMessage(fixture(t, "transact.json")), fixture(t, bondShow), fixture(t, lacpShow), fixture(t, "lacp-show-stats.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestFixtureBonds(t *testing.T) {
	h := fixtureHost(t, "bond-show.txt", "lacp-show.txt")
	var got []string
	for _, b := range h.Bonds {
		got = append(got, b.Bridge+"/"+b.Name+" "+b.Mode+" lacp="+b.LACP+" "+b.LACPStatus)
	}
	want := []string{
		"br-a/bond-a balance-tcp lacp=active negotiated",
		"br-b/bond-b balance-tcp lacp=active negotiated",
		"br-c/ab-c active-backup lacp=off off",
		"br-d/ab-d active-backup lacp=off off",
		"br-e/slb-e balance-slb lacp=off off",
		"br-f/slb-f balance-slb lacp=off off",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("bonds:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	a, b := h.Bond("bond-a"), h.Bond("bond-b")
	if a.RebalanceMs != 1000 || b.RebalanceMs != 0 || a.LACPTime != "fast" {
		t.Errorf("rebalance %d/%d, lacp time %q", a.RebalanceMs, b.RebalanceMs, a.LACPTime)
	}
	if a.ActiveMember == "" || a.member(a.ActiveMember) == nil || !a.member(a.ActiveMember).Active {
		t.Errorf("bond-a active member %q", a.ActiveMember)
	}
	var buckets int
	for _, m := range a.Members {
		if !m.Known || !m.Enabled || m.LACP == nil || m.LACPStats == nil || m.OFPort == nil || m.IfIndex == nil {
			t.Errorf("%s: %+v", m.Name, m)
			continue
		}
		if m.LACP.Partner.SysID != b.SysID || m.LACP.Actor.SysID != a.SysID {
			t.Errorf("%s: actor %s partner %s; bond-a %s bond-b %s", m.Name, m.LACP.Actor.SysID, m.LACP.Partner.SysID, a.SysID, b.SysID)
		}
		buckets += len(m.Buckets)
	}
	if buckets == 0 {
		t.Error("bond-a: no hash buckets in the fixture")
	}
	if c := h.Bond("ab-c"); c.UpDelayMs != 100 || c.DownDelayMs != 50 || c.Members[0].LACP != nil {
		t.Errorf("ab-c: %+v", c)
	}
}

func TestFixtureMemberDown(t *testing.T) {
	h := fixtureHost(t, "bond-show-down.txt", "lacp-show-down.txt")
	if m := h.Bond("bond-a").member("a1"); m.Enabled || m.MayEnable {
		t.Errorf("a1 after link down: enabled %v may_enable %v", m.Enabled, m.MayEnable)
	}
	if got := h.Bond("ab-c").ActiveMember; got != "c1" {
		t.Errorf("ab-c active member %q after c0 went down, want c1", got)
	}
}

func TestParseBondShowOldWords(t *testing.T) {
	// Before OVS 2.16 members were "slaves".
	text := strings.NewReplacer("member ", "slave ", "active member", "active slave").Replace(fixture(t, "bond-show.txt"))
	old, err := ParseBondShow(text)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := ParseBondShow(fixture(t, "bond-show.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(old) != len(cur) {
		t.Fatalf("%d bonds with old words, %d with new", len(old), len(cur))
	}
	for i := range cur {
		if old[i].ActiveMember != cur[i].ActiveMember || len(old[i].Members) != len(cur[i].Members) {
			t.Errorf("%s: old words give %+v, new %+v", cur[i].Name, old[i], cur[i])
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"no header", "bond_mode: balance-tcp\n", "before any"},
		{"bad hash", "---- b ----\nmember x: enabled\n  hash 300: 1 kB load\n", "0..255"},
		{"bad load", "---- b ----\nmember x: enabled\n  hash 3: lots\n", "kB load"},
		{"bad ms", "---- b ----\nupdelay: soon\n", "N ms"},
		{"member no state", "---- b ----\nmember x\n", "no state"},
	} {
		_, err := ParseBondShow(tc.text)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := ParseLACPShow("---- b ----\nmember: x: current attached\n  actor state: activity sleepy\n"); err == nil || !strings.Contains(err.Error(), "sleepy") {
		t.Errorf("unknown state word: %v", err)
	}
	if _, err := ParseLACPStats("---- b statistics ----\nmember: x:\n  TX PDUs: many\n"); err == nil {
		t.Error("a non-numeric count was accepted")
	}
}

func TestDecodeTransactErrors(t *testing.T) {
	for _, tc := range []struct{ name, res, want string }{
		{"not array", `{}`, "not an array"},
		{"short", `[{"rows":[]}]`, "1 results"},
		{"op error", `[{"error":"unknown column","details":"no bond_mode"},{},{}]`, "unknown column"},
		{"bad uuid", `[{"rows":[{"_uuid":["uuid",1],"name":"br0"}]},{"rows":[]},{"rows":[]}]`, "uuid"},
		{"map not map", `[{"rows":[]},{"rows":[{"name":"p","other_config":["set",[]]}]},{"rows":[]}]`, "map"},
		{"two names", `[{"rows":[{"name":["set",["a","b"]]}]},{"rows":[]},{"rows":[]}]`, "at most one"},
	} {
		_, err := decodeTransact(json.RawMessage(tc.res))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// fakeServer answers one connection with a script of raw messages per
// request: it reads a request and writes the replies, with the request's
// id substituted for "ID".
func fakeServer(t *testing.T, replies ...[]string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		dec := json.NewDecoder(c)
		for _, script := range replies {
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if dec.Decode(&req) != nil {
				return
			}
			for _, r := range script {
				if _, err := c.Write([]byte(strings.ReplaceAll(r, `"ID"`, string(req.ID)))); err != nil {
					return
				}
				if strings.Contains(r, `"method":"echo"`) {
					var echo map[string]any
					if dec.Decode(&echo) != nil || echo["id"] != "e1" {
						return
					}
				}
			}
		}
	}()
	return path
}

func TestRPCCall(t *testing.T) {
	path := fakeServer(t,
		[]string{
			`{"method":"echo","params":[],"id":"e1"}`,
			`{"method":"update","params":[null,{}],"id":null}`,
			`{"result":"stale","error":null,"id":"0"}`,
			`{"result":"hello","error":null,"id":"ID"}`,
		},
		[]string{`{"result":null,"error":"\"x/y\" is not a valid command","id":"ID"}`},
		[]string{`[1,2]`},
	)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := dialRPC(ctx, path, maxCtlMessage)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.call(ctx, "bond/show", nil)
	if err != nil || string(res) != `"hello"` {
		t.Fatalf("call: %s, %v", res, err)
	}
	_, err = c.call(ctx, "x/y", nil)
	var rpcErr *RPCError
	if !errors.As(err, &rpcErr) || !strings.Contains(rpcErr.Detail, "not a valid command") {
		t.Fatalf("error reply: %v", err)
	}
	if _, err = c.call(ctx, "bond/show", nil); err == nil || !strings.Contains(err.Error(), "not a JSON object") {
		t.Fatalf("array reply: %v", err)
	}
}

func TestClientErrors(t *testing.T) {
	c := NewClient(t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := c.Read(ctx); err == nil || !strings.Contains(err.Error(), "is ovsdb-server running") {
		t.Errorf("no ovsdb-server: %v", err)
	}
	if _, err := c.Appctl(ctx, "bond/show"); err == nil || !strings.Contains(err.Error(), "--ovs-rundir") {
		t.Errorf("no ovs-vswitchd: %v", err)
	}
	os.WriteFile(filepath.Join(c.RunDir, "ovs-vswitchd.pid"), []byte("x\n"), 0o644)
	if _, err := c.ControlSocket(); err == nil || !strings.Contains(err.Error(), "not a process id") {
		t.Errorf("bad pidfile: %v", err)
	}
}

func TestDecoderBudget(t *testing.T) {
	defer func(m int) { maxMessage = m }(maxMessage)
	maxMessage = 1 << 20
	// A value that never ends stops at the limit instead of filling memory.
	huge := io.MultiReader(strings.NewReader(`{"result":"`), &endless{})
	d := newDecoder(huge, maxMessage)
	if _, err := d.next(); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("endless message: %v", err)
	}
	// Messages below the limit keep flowing, each with a fresh budget.
	var stream strings.Builder
	for range 3 {
		stream.WriteString(`{"result":"` + strings.Repeat("x", 1000) + `","id":1}`)
	}
	d = newDecoder(strings.NewReader(stream.String()), maxMessage)
	for i := range 3 {
		if _, err := d.next(); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// TestReadOldVswitchd serves a release without lacp/show-stats: the bonds
// still get bond/show's and lacp/show's state.
func TestReadOldVswitchd(t *testing.T) {
	dir := t.TempDir()
	serve := func(path string, reply func(method string, params json.RawMessage) string) {
		l, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					dec := json.NewDecoder(c)
					for {
						var req struct {
							Method string          `json:"method"`
							Params json.RawMessage `json:"params"`
							ID     json.RawMessage `json:"id"`
						}
						if dec.Decode(&req) != nil {
							return
						}
						if _, err := c.Write([]byte(strings.ReplaceAll(reply(req.Method, req.Params), `"ID"`, string(req.ID)))); err != nil {
							return
						}
					}
				}()
			}
		}()
	}
	text := func(s string) string {
		b, _ := json.Marshal(s)
		return `{"result":` + string(b) + `,"error":null,"id":"ID"}`
	}
	serve(filepath.Join(dir, "db.sock"), func(_ string, params json.RawMessage) string {
		return `{"result":` + fakeTransact(t, params) + `,"error":null,"id":"ID"}`
	})
	os.WriteFile(filepath.Join(dir, "ovs-vswitchd.pid"), []byte("4242\n"), 0o644)
	serve(filepath.Join(dir, "ovs-vswitchd.4242.ctl"), func(method string, _ json.RawMessage) string {
		switch method {
		case "bond/show":
			return text(fixture(t, "bond-show.txt"))
		case "lacp/show":
			return text(fixture(t, "lacp-show.txt"))
		}
		return `{"result":null,"error":"\"` + method + `\" is not a valid command","id":"ID"}`
	})
	c := NewClient(dir)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h, err := c.Read(ctx)
	if err != nil || h.VswitchdErr != nil {
		t.Fatalf("read: %v / %v", err, h.VswitchdErr)
	}
	a := h.Bond("bond-a")
	if a.LACPStatus != "negotiated" || a.Members[0].LACP == nil || a.Members[0].LACPStats != nil || !a.Members[0].Known {
		t.Errorf("bond-a from an old ovs-vswitchd: %+v", a)
	}
	// A second read reuses both connections.
	if _, err := c.Read(ctx); err != nil {
		t.Fatal(err)
	}
}

// fakeTransact answers a transact request from the captured tables: each
// select gets the rows of its table, filtered by a `_uuid ==` condition.
func fakeTransact(t *testing.T, params json.RawMessage) string {
	var captured []struct {
		Rows []map[string]json.RawMessage `json:"rows"`
	}
	if err := json.Unmarshal([]byte(fixture(t, "transact.json")), &captured); err != nil {
		panic(err)
	}
	tables := map[string][]map[string]json.RawMessage{"Bridge": captured[0].Rows, "Port": captured[1].Rows, "Interface": captured[2].Rows}
	var req []json.RawMessage
	if err := json.Unmarshal(params, &req); err != nil || len(req) < 2 {
		panic("bad transact params")
	}
	var out []any
	for _, raw := range req[1:] {
		var op struct {
			Table string  `json:"table"`
			Where [][]any `json:"where"`
		}
		if err := json.Unmarshal(raw, &op); err != nil {
			panic(err)
		}
		rows := []map[string]json.RawMessage{}
		for _, row := range tables[op.Table] {
			keep := true
			for _, cond := range op.Where {
				want, _ := json.Marshal(cond[2])
				var got, w any
				_ = json.Unmarshal(row["_uuid"], &got)
				_ = json.Unmarshal(want, &w)
				keep = keep && cond[0] == "_uuid" && fmt.Sprint(got) == fmt.Sprint(w)
			}
			if keep {
				rows = append(rows, row)
			}
		}
		out = append(out, map[string]any{"rows": rows})
	}
	b, _ := json.Marshal(out)
	return string(b)
}
