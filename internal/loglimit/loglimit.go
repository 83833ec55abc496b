// Package loglimit owns the rate limit on log lines a peer can provoke
// (refused connections, failed TLS handshakes): a burst passes, then at
// most one line per interval, and the next line that passes says how many
// were held back, so a flood of them cannot flood the log.
package loglimit

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"time"
)

// Limiter passes a burst of lines, then at most one per interval, and
// counts what it held back.
type Limiter struct {
	burst int
	every time.Duration

	mu      sync.Mutex
	tokens  float64
	last    time.Time
	dropped int
}

// New returns a Limiter that passes burst lines at once, then one every
// interval.
func New(burst int, every time.Duration) *Limiter {
	return &Limiter{burst: burst, every: every, tokens: float64(burst)}
}

// Allow says whether a line may go out now, and how many were held back
// since the last one that did.
func (l *Limiter) Allow(now time.Time) (ok bool, dropped int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() {
		l.tokens = min(float64(l.burst), l.tokens+float64(now.Sub(l.last))/float64(l.every))
	}
	l.last = now
	if l.tokens < 1 {
		l.dropped++
		return false, 0
	}
	l.tokens--
	dropped, l.dropped = l.dropped, 0
	return true, dropped
}

// Writer writes each line (one Write, as a log.Logger makes) to w if l
// allows it, saying how many it held back before; held-back lines count
// as written, so the logger goes on.
func (l *Limiter) Writer(w io.Writer) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		ok, dropped := l.Allow(time.Now())
		if !ok {
			return len(p), nil
		}
		line := bytes.TrimRight(p, "\n")
		var err error
		if dropped > 0 {
			_, err = fmt.Fprintf(w, "%s (and %d more not logged)\n", line, dropped)
		} else {
			_, err = fmt.Fprintf(w, "%s\n", line)
		}
		return len(p), err
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
