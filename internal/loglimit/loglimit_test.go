package loglimit

import (
	"log"
	"strings"
	"testing"
	"time"
)

func TestLimiter(t *testing.T) {
	l := New(3, time.Second)
	now := time.Unix(1000, 0)
	passed := 0
	for range 10 {
		if ok, _ := l.Allow(now); ok {
			passed++
		}
	}
	if passed != 3 {
		t.Fatalf("%d of 10 lines at once passed, want the burst of 3", passed)
	}
	ok, dropped := l.Allow(now.Add(1500 * time.Millisecond))
	if !ok || dropped != 7 {
		t.Errorf("after 1.5s: ok %v, dropped %d; want a line saying 7 were held back", ok, dropped)
	}
}

// TestWriter: a log.Logger over the Writer prints the burst, then nothing,
// then a line that counts what it held back.
func TestWriter(t *testing.T) {
	var out strings.Builder
	l := New(2, 50*time.Millisecond)
	logger := log.New(l.Writer(&out), "", 0)
	for i := range 5 {
		logger.Printf("refused %d", i)
	}
	time.Sleep(60 * time.Millisecond)
	logger.Print("refused 5")
	want := "refused 0\nrefused 1\nrefused 5 (and 3 more not logged)\n"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}
