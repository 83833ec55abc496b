package load

import (
	"sync"
	"testing"
	"time"

	"github.com/bondtop/bondtop/internal/udpstat"
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
			dropsBefore := udpInErrors(t)
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
			// A datagram the kernel dropped from a full socket buffer (a
			// busy machine, the race detector) is missing from the
			// sequence; every gap must be one the summary counts as lost,
			// and every loss one the host counted as dropped.
			var skipped uint64
			for i := 1; i < len(seqs); i++ {
				if seqs[i] <= seqs[i-1] {
					t.Errorf("datagram %d: sequence %d after %d", i, seqs[i], seqs[i-1])
					break
				}
				skipped += seqs[i] - seqs[i-1] - 1
			}
			if skipped != uint64(sum.Received.Lost) {
				t.Errorf("OnDatagram skipped %d sequence numbers, the summary counts %d lost", skipped, sum.Received.Lost)
			}
			if time.Since(last) > time.Second {
				t.Errorf("last datagram %v ago", time.Since(last))
			}
			if uint64(len(sent)) != sum.Sent.Packets || len(sent) > 0 && sent[len(sent)-1] != uint64(len(sent)) {
				t.Errorf("OnSend saw %d datagrams (not numbered 1 to %d); the summary counts %d sent", len(sent), len(sent), sum.Sent.Packets)
			}
			drops := udpInErrors(t) - dropsBefore
			if lost := sum.Sent.Lost + sum.Received.Lost; sum.Sent.Packets == 0 || lost < 0 || uint64(lost) > drops {
				t.Errorf("sent %d datagrams; %d lost on loopback each way (%d, %d), where the host dropped %d on receipt",
					sum.Sent.Packets, lost, sum.Sent.Lost, sum.Received.Lost, drops)
			}
			if drops > 0 {
				t.Logf("the host dropped %d datagrams on receipt during the test; %d sent and %d received were lost", drops, sum.Sent.Lost, sum.Received.Lost)
			}
		})
	}
}

// udpInErrors is this host's count of datagrams dropped on receipt.
func udpInErrors(t *testing.T) uint64 {
	t.Helper()
	n, err := udpstat.InErrors()
	if err != nil {
		t.Fatal(err)
	}
	return n
}
