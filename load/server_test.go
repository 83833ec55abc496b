package load

import (
	"testing"
	"time"
)

func TestIperf3ClientAgainstServer(t *testing.T) {
	port := startServer(t, &Server{})
	for _, args := range [][]string{
		{"-t", "1"},
		{"-t", "1", "-P", "4"},
		{"-t", "1", "-R"},
		{"-t", "1", "--bidir", "-P", "2"},
		{"-t", "1", "-u", "-b", "10M"},
		{"-t", "1", "-u", "-b", "10M", "-R", "-P", "2"},
	} {
		out, err := runIperf3Client(t, port, args...)
		if err != nil {
			t.Fatalf("iperf3 %v: %v\n%s", args, err, out)
		}
		t.Logf("iperf3 %v:\n%s", args, out)
	}
}

func TestClientAgainstServer(t *testing.T) {
	port := startServer(t, &Server{})
	sum, _ := runClient(t, Config{Target: "127.0.0.1", Port: port, Duration: time.Second, Streams: 2})
	t.Logf("%+v", sum)
}
