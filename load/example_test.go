package load_test

import (
	"context"
	"fmt"
	"time"

	"github.com/bondtop/bondtop/load"
)

// A dashboard starts a test, draws each interval as it comes (the engine
// never waits for it), may stop it early, and shows the summary.
func Example() {
	test, err := load.Start(context.Background(), load.Config{
		Target:   "192.0.2.10", // runs iperf3 -s or bondtop serve
		Streams:  4,
		Duration: 30 * time.Second,
	})
	if err != nil {
		fmt.Println("bad form:", err) // validation only: nothing started
		return
	}
	go func() {
		for iv := range test.Intervals() {
			for _, s := range iv.Streams {
				_ = s.PredictedSlave // row: stream, slave, s.BitsPerSecond, s.Retransmits
			}
		}
	}()
	// On the user's "stop" key: test.Stop() — it returns at once; the
	// engine sends TEST_END and collects the results.
	select {
	case <-test.Done():
	case <-time.After(time.Minute):
		test.Stop()
	}
	sum, err := test.Wait()
	if err != nil {
		fmt.Println("test failed:", err) // refused, busy, server error: in words
		return
	}
	fmt.Printf("%.1f Gbit/s\n", sum.Sent.BitsPerSecond/1e9)
}
