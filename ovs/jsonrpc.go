package ovs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// maxMessage bounds one OVSDB message and maxCtlMessage one unixctl
// reply: whatever a socket sends, bondtop holds a bounded multiple of
// these (the decoder's buffer and the decoded copies), and a reply over
// the bound is an error the caller shows as a warning. OVSDB's select of
// the Bridge and Port columns is about 500 bytes a port, the Interface
// rows of the bonds' members about 1.5 kB each: 8 MiB is some 15 000
// ports. A bond/show or lacp/show of a switch with many bonds is tens of
// kB. Variables so that tests can lower them. See docs/security.md.
var (
	maxMessage    = 8 << 20
	maxCtlMessage = 1 << 20
)

// message is one JSON-RPC 1.0 message as both OVSDB (RFC 7047 section 4)
// and ovs-vswitchd's unixctl server send them: a request (method, params,
// id), a notification (id null) or a response (result, error, id).
type message struct {
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
	ID     json.RawMessage `json:"id"`
}

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// decoder reads the concatenated JSON objects of a JSON-RPC stream (neither
// side frames messages; each is one JSON value).
type decoder struct {
	dec    *json.Decoder
	budget *budgetReader
	limit  int
}

// budgetReader lets at most left bytes through, then fails: next refills
// it before each message, so one endless or huge value cannot make the
// json.Decoder buffer without bound.
type budgetReader struct {
	r     io.Reader
	left  int64
	limit int
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("a message is over the %d-byte limit", b.limit)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// newDecoder reads messages of at most limit bytes from r.
func newDecoder(r io.Reader, limit int) *decoder {
	b := &budgetReader{r: r, limit: limit}
	return &decoder{dec: json.NewDecoder(b), budget: b, limit: limit}
}

// next reads one message. A value that is not a JSON object, or an object
// that is neither request nor response, is an error.
func (d *decoder) next() (*message, error) {
	// What the decoder holds already (read past the last message) counts
	// against this one's budget.
	d.budget.left = int64(d.limit) - int64(bufferedLen(d.dec))
	var raw json.RawMessage
	if err := d.dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("json-rpc: %w", err)
	}
	if len(raw) > d.limit {
		return nil, fmt.Errorf("json-rpc: message of %d bytes is over the %d-byte limit", len(raw), d.limit)
	}
	return decodeMessage(raw)
}

// bufferedLen is how many bytes dec has read but not decoded yet.
func bufferedLen(dec *json.Decoder) int {
	if r, ok := dec.Buffered().(interface{ Len() int }); ok {
		return r.Len()
	}
	return 0
}

// decodeMessage checks one JSON value is a well-formed JSON-RPC message.
func decodeMessage(raw []byte) (*message, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' {
		return nil, errors.New("json-rpc: message is not a JSON object")
	}
	var m message
	if err := json.Unmarshal(t, &m); err != nil {
		return nil, fmt.Errorf("json-rpc: %w", err)
	}
	if m.Method == "" && m.Result == nil && m.Error == nil {
		return nil, errors.New("json-rpc: message has neither method nor result nor error")
	}
	if m.Method != "" && m.Params != nil {
		if p := bytes.TrimSpace(m.Params); len(p) == 0 || p[0] != '[' {
			return nil, fmt.Errorf("json-rpc: %s: params are not an array", m.Method)
		}
	}
	return &m, nil
}

// RPCError is an error a server answered with (the "error" member).
type RPCError struct {
	Method string
	// Detail is the server's error: OVSDB sends an object with "error" and
	// "details", unixctl a string (for example `"lacp/show-stats" is not a
	// valid command`).
	Detail string
}

func (e *RPCError) Error() string { return e.Method + ": " + e.Detail }

// errorText makes the server's "error" member readable.
func errorText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Error   string `json:"error"`
		Details string `json:"details"`
	}
	if json.Unmarshal(raw, &o) == nil && o.Error != "" {
		if o.Details != "" {
			return o.Error + ": " + o.Details
		}
		return o.Error
	}
	return string(raw)
}

// rpcConn is one JSON-RPC session on a unix socket. Calls are sequential:
// bondtop asks one question at a time, so no request is outstanding when
// the next is sent.
type rpcConn struct {
	conn   net.Conn
	dec    *decoder
	nextID int
}

// dialRPC connects to a unix socket whose messages are at most limit
// bytes.
func dialRPC(ctx context.Context, path string, limit int) (*rpcConn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	return &rpcConn{conn: c, dec: newDecoder(c, limit)}, nil
}

func (c *rpcConn) Close() error { return c.conn.Close() }

// call sends one request and waits for its response, answering the
// server's "echo" keepalives on the way (RFC 7047 section 4.1.11) and
// ignoring notifications. The context's deadline bounds the whole call.
func (c *rpcConn) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(5 * time.Second)
	}
	if err := c.conn.SetDeadline(deadline); err != nil {
		return nil, err
	}
	c.nextID++
	id := strconv.Itoa(c.nextID)
	if params == nil {
		params = []any{}
	}
	req, err := json.Marshal(map[string]any{"method": method, "params": params, "id": id})
	if err != nil {
		return nil, err
	}
	if _, err := c.conn.Write(req); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	for {
		m, err := c.dec.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("%s: the server closed the connection", method)
			}
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		if m.Method == "echo" && !isNull(m.ID) {
			reply, _ := json.Marshal(map[string]any{"result": m.Params, "error": nil, "id": m.ID})
			if _, err := c.conn.Write(reply); err != nil {
				return nil, fmt.Errorf("%s: answer echo: %w", method, err)
			}
			continue
		}
		if m.Method != "" {
			continue // a notification or a request we do not serve
		}
		var gotID string
		if json.Unmarshal(m.ID, &gotID) != nil || gotID != id {
			continue // a late answer to an earlier, timed-out call
		}
		if !isNull(m.Error) {
			return nil, &RPCError{Method: method, Detail: errorText(m.Error)}
		}
		return m.Result, nil
	}
}
