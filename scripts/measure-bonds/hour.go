package main

import (
	"fmt"
	"os"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/collector/rootdir"
	"github.com/bondtop/bondtop/internal/bondtree"
	"github.com/bondtop/bondtop/record"
)

// writeHour writes to path a recording of an hour of a -size tree sampled
// at pace, its counters moving as keepTree moves them, and its snapshots
// an hour old up to now: `bondtop --replay path --speed N` then holds the
// hour of history the dashboard keeps, in seconds, for a measurement of
// its memory.
func writeHour(path, size string, pace time.Duration) error {
	var bonds, slaves int
	if _, err := fmt.Sscanf(size, "%dx%d", &bonds, &slaves); err != nil {
		return fmt.Errorf("size %q: want BONDSxSLAVES", size)
	}
	if pace <= 0 {
		return fmt.Errorf("-pace %v: want a positive duration", pace)
	}
	dir, err := os.MkdirTemp("", "bondtop-hour-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if _, err := bondtree.Write(dir, bonds, slaves); err != nil {
		return err
	}
	root, err := rootdir.New(dir)
	if err != nil {
		return err
	}
	src := &bondtree.MovingSource{Source: root, Step: uint64(pace / interval)}
	defer src.Close()
	n := int(time.Hour / pace)
	now := time.Now().Add(-time.Duration(n) * pace)
	s := collector.NewSampler(src, collector.Options{Interval: pace, Clock: func() time.Time { return now }})
	w, err := record.Create(path, record.Header{Started: now, Interval: pace.Seconds()})
	if err != nil {
		return err
	}
	for range n {
		now = now.Add(pace)
		snap, err := s.Sample()
		if err != nil {
			w.Close()
			return err
		}
		if err := w.Write(snap); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}
