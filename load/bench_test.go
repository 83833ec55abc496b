package load

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// benchSeconds is each measured test's length: long enough for TCP to
// reach its rate on loopback, short enough for -count 5.
const benchSeconds = 3

// BenchmarkLoopback measures, side by side in one run on loopback:
// bondtop's client and iperf3's against the same `iperf3 -s` (1 and 4
// streams), and an iperf3 client against `iperf3 -s` and against bondtop's
// server. Each op is one test; the figure is the receiver's Gbit/s.
//
//	go test -run '^$' -bench Loopback -count 5 ./load/
func BenchmarkLoopback(b *testing.B) {
	iperfPort := startIperf3Server(b)
	ourPort := startServer(b, &Server{Logf: func(string, ...any) {}})
	for _, n := range []int{1, 4} {
		b.Run(fmt.Sprintf("client=bondtop/P%d", n), func(b *testing.B) {
			benchOur(b, iperfPort, n)
		})
		b.Run(fmt.Sprintf("client=iperf3/P%d", n), func(b *testing.B) {
			benchIperf3(b, iperfPort, n)
		})
		// iperf3 with bondtop's write size, to show what the size does.
		b.Run(fmt.Sprintf("client=iperf3-l1M/P%d", n), func(b *testing.B) {
			benchIperf3(b, iperfPort, n, "-l", "1M")
		})
	}
	b.Run("server=bondtop/P1", func(b *testing.B) { benchIperf3(b, ourPort, 1) })
	b.Run("server=iperf3/P1", func(b *testing.B) { benchIperf3(b, iperfPort, 1) })
}

func benchOur(b *testing.B, port uint16, streams int) {
	var bps float64
	for range b.N {
		var test *Test
		for try := 0; ; try++ {
			var err error
			test, err = Start(context.Background(), Config{Target: "127.0.0.1", Port: port, Streams: streams, Duration: benchSeconds * time.Second})
			if err != nil {
				b.Fatal(err)
			}
			sum, err := test.Wait()
			if err != nil && try < 20 && len(test.Streams()) == 0 {
				// iperf3 -s between tests: busy or restarting.
				time.Sleep(100 * time.Millisecond)
				continue
			}
			if err != nil {
				b.Fatal(err)
			}
			bps += sum.Sent.BitsPerSecond
			break
		}
	}
	b.ReportMetric(bps/float64(b.N)/1e9, "Gbit/s")
	b.ReportMetric(0, "ns/op")
}

func benchIperf3(b *testing.B, port uint16, streams int, extra ...string) {
	var bps float64
	for range b.N {
		for try := 0; ; try++ {
			args := append([]string{"-t", fmt.Sprint(benchSeconds), "-P", fmt.Sprint(streams), "-J"}, extra...)
			out, err := runIperf3Client(b, port, args...)
			var r struct {
				Error string `json:"error"`
				End   struct {
					SumReceived struct {
						BitsPerSecond num `json:"bits_per_second"`
					} `json:"sum_received"`
				} `json:"end"`
			}
			decodeLenient([]byte(out), &r)
			if (err != nil || r.Error != "") && try < 20 {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			if err != nil || r.Error != "" {
				b.Fatalf("iperf3: %v %s", err, r.Error)
			}
			bps += float64(r.End.SumReceived.BitsPerSecond)
			break
		}
	}
	b.ReportMetric(bps/float64(b.N)/1e9, "Gbit/s")
	b.ReportMetric(0, "ns/op")
}
