package load

import (
	"sync"
	"testing"
	"time"
)

// OnDatagram sees every datagram this host receives, OnSend every one it
// sends, in sequence, at the
// drill's settings (64-byte datagrams, 1000 a second each way, until
// stopped), against a real iperf3 -s and bondtop's server: as many as the
// summary counts, and none sent to the peer.
func TestOnDatagram(t *testing.T) {
	for _, peer := range []string{"iperf3", "bondtop"} {
		t.Run(peer, func(t *testing.T) {
			var port uint16
			if peer == "iperf3" {
				port = startIperf3Server(t)
			} else {
				port = startServer(t, &Server{})
			}
			var mu sync.Mutex
			var seqs []uint64
			var last time.Time
			var sent []uint64
			cfg := Config{Target: "127.0.0.1", Port: port, Protocol: UDP, Direction: Bidirectional, UntilStopped: true,
				Rate: 1000 * 64 * 8, BlockSize: 64, OnDatagram: func(stream int, seq uint64, at time.Time) {
					mu.Lock()
					defer mu.Unlock()
					if stream == 1 {
						t.Errorf("a datagram seen on the stream this host sends")
					}
					seqs = append(seqs, seq)
					last = at
				}, OnSend: func(stream int, seq uint64, at time.Time) {
					mu.Lock()
					defer mu.Unlock()
					if stream != 1 {
						t.Errorf("a datagram sent on stream %d, which this host receives on", stream)
					}
					sent = append(sent, seq)
				}}
			test := startClient(t, cfg)
			time.Sleep(1500 * time.Millisecond)
			test.Stop()
			sum, err := test.Wait()
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			got := uint64(len(seqs))
			want := sum.Received.Packets - uint64(sum.Received.Lost)
			if got == 0 || got != want {
				t.Errorf("OnDatagram saw %d datagrams, the summary counts %d received (%d sent, %d lost)", got, want, sum.Received.Packets, sum.Received.Lost)
			}
			// 1000/s for 1.5 s, and until the peer hears of the stop.
			if got < 1000 || got > 3000 {
				t.Errorf("%d datagrams in 1.5 s at 1000/s", got)
			}
			for i := 1; i < len(seqs); i++ {
				if seqs[i] != seqs[i-1]+1 {
					t.Errorf("datagram %d: sequence %d after %d", i, seqs[i], seqs[i-1])
					break
				}
			}
			if time.Since(last) > time.Second {
				t.Errorf("last datagram %v ago", time.Since(last))
			}
			if uint64(len(sent)) != sum.Sent.Packets || len(sent) > 0 && sent[len(sent)-1] != uint64(len(sent)) {
				t.Errorf("OnSend saw %d datagrams (not numbered 1 to %d); the summary counts %d sent", len(sent), len(sent), sum.Sent.Packets)
			}
			if sum.Sent.Packets == 0 || sum.Sent.Lost != 0 {
				t.Errorf("sent %d datagrams, %d lost on loopback", sum.Sent.Packets, sum.Sent.Lost)
			}
		})
	}
}
