package load

import (
	"context"
	"testing"
	"time"
)

func runClient(t *testing.T, cfg Config) (Summary, []Interval) {
	t.Helper()
	test, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var ivs []Interval
	for iv := range test.Intervals() {
		ivs = append(ivs, iv)
	}
	sum, err := test.Wait()
	if err != nil {
		t.Fatalf("test: %v", err)
	}
	return sum, ivs
}

func TestClientAgainstIperf3TCP(t *testing.T) {
	port := startIperf3Server(t)
	sum, ivs := runClient(t, Config{Target: "127.0.0.1", Port: port, Duration: 2 * time.Second, Streams: 1})
	t.Logf("%+v", sum)
	t.Logf("%d intervals", len(ivs))
}
