package load

import (
	"bytes"
	"encoding/binary"
	"testing"
)

func TestLenientNumbers(t *testing.T) {
	var r results
	body := `{"cpu_util_total":1.5,"cpu_util_user":"2","cpu_util_system":null,"sender_has_retransmits":18446744073709551615,
		"streams":[{"id":1,"bytes":1e3,"retransmits":18446744073709551615,"jitter":0.001,"errors":true,"packets":"x","start_time":0,"end_time":1}]}`
	if err := decodeLenient([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	s := r.Streams[0]
	if r.SenderHasRetransmits != -1 || s.Retransmits.int64() != -1 || s.Bytes.int64() != 1000 || s.Errors != 1 || s.Packets != 0 || r.CPUUtilUser != 2 {
		t.Errorf("decoded %+v %+v", r, s)
	}
}

// FuzzControlMessage feeds arbitrary bytes to the server's control
// message reader and decoders: they may fail, never panic or allocate
// beyond the limit.
func FuzzControlMessage(f *testing.F) {
	msg := func(s string) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(len(s)))
		return append(b, s...)
	}
	f.Add(msg(`{"tcp":true,"omit":0,"time":10,"num":0,"blockcount":0,"parallel":4,"reverse":true,"len":131072,"client_version":"3.12"}`))
	f.Add(msg(`{"udp":true,"time":1e300,"parallel":-5,"bandwidth":18446744073709551615,"len":"x"}`))
	f.Add(msg(`{"cpu_util_total":0,"cpu_util_user":0,"cpu_util_system":0,"sender_has_retransmits":1,"streams":[{"id":1,"bytes":5}]}`))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, '{'})
	f.Add([]byte{0, 0, 0, 0})
	f.Add(msg(`[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		body, err := readMessage(bytes.NewReader(data), maxJSONServer)
		if err != nil {
			return
		}
		if len(body) > maxJSONServer {
			t.Fatalf("read %d bytes, limit %d", len(body), maxJSONServer)
		}
		var p peerParams
		if decodeLenient(body, &p) == nil {
			st := &serverTest{srv: &Server{}}
			if st.accept(&p) == nil {
				if st.streamsN < 1 || st.streamsN > MaxStreams || st.block <= 0 || st.block > maxTCPBlock {
					t.Fatalf("accepted %+v: %d streams, block %d", p, st.streamsN, st.block)
				}
			}
		}
		var r results
		decodeLenient(body, &r)
	})
}
