// Package record keeps what bondtop saw: it writes snapshots to a file while
// monitoring and reads them back for replay, on any machine (a recording
// made as root on a server replays on a laptop).
//
// The format is gzip-compressed JSON lines, versioned and append-only. Each
// recording session is one gzip member that starts with a header line
// ({"bondtop_recording": 1, ...}) followed by one snapshot per line, the
// same JSON `--json` prints. A new session appends a new member; gzip
// readers read the members as one stream. Every snapshot is flushed as it
// is written, so a recording cut short (a crash, a full disk) still
// replays up to its last complete line, and the reader says where it
// stopped.
package record

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/bondtop/bondtop/collector"
)

// FormatVersion is the version a header line carries. A reader refuses
// versions newer than its own.
const FormatVersion = 1

// maxLine bounds one snapshot line: a host with many bonds of many slaves
// stays far below it; a corrupt file does not make the reader allocate
// without bound.
const maxLine = 16 << 20

// Header opens each recording session.
type Header struct {
	Format   int       `json:"bondtop_recording"`
	Started  time.Time `json:"started"`
	Host     string    `json:"host,omitempty"`
	Version  string    `json:"bondtop_version,omitempty"`
	Interval float64   `json:"interval_s"`
}

// Writer appends snapshots to a recording file.
type Writer struct {
	f   *os.File
	gz  *gzip.Writer
	buf bytes.Buffer
}

// Create opens path for appending (creating it if needed) and writes the
// session's header.
func Create(path string, h Header) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--record: %w", err)
	}
	w := &Writer{f: f, gz: gzip.NewWriter(f)}
	h.Format = FormatVersion
	if err := w.writeLine(h); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// Write appends one snapshot and flushes it to the file.
func (w *Writer) Write(s *collector.Snapshot) error { return w.writeLine(s) }

func (w *Writer) writeLine(v any) error {
	w.buf.Reset()
	if err := json.NewEncoder(&w.buf).Encode(v); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	if _, err := w.gz.Write(w.buf.Bytes()); err != nil {
		return fmt.Errorf("record %s: %w", w.f.Name(), err)
	}
	// A sync flush ends a deflate block, so everything written so far can
	// be read back even if the process dies before Close.
	if err := w.gz.Flush(); err != nil {
		return fmt.Errorf("record %s: %w", w.f.Name(), err)
	}
	return nil
}

// Close ends the session's gzip member and the file.
func (w *Writer) Close() error {
	err := w.gz.Close()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Entry is one recorded snapshot: the exact line that was written and its
// decoded form.
type Entry struct {
	Raw      []byte
	Snapshot *collector.Snapshot
}

// Recording is what a file held.
type Recording struct {
	Headers []Header
	Entries []Entry
}

// ErrTruncated is wrapped by Read's error when the file ends in the middle
// of a line or a gzip member: what came before it is returned.
var ErrTruncated = errors.New("the recording is cut short")

// Read reads a whole recording. On a damaged or truncated file it returns
// the entries read up to the damage together with an error that says where
// it stopped.
func Read(path string) (*Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--replay: %w", err)
	}
	defer f.Close()
	return ReadFrom(f, path)
}

// ReadFrom reads a recording from r; name is for messages.
func ReadFrom(r io.Reader, name string) (*Recording, error) {
	rec := &Recording{}
	gz, err := gzip.NewReader(bufio.NewReader(r))
	if err != nil {
		return rec, fmt.Errorf("%s is not a bondtop recording (%v)", name, err)
	}
	sc := bufio.NewScanner(gz)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	line := 0
	for sc.Scan() {
		line++
		raw := sc.Bytes()
		if bytes.HasPrefix(raw, []byte(`{"bondtop_recording"`)) {
			var h Header
			if err := json.Unmarshal(raw, &h); err != nil {
				return rec, fmt.Errorf("%s, line %d: bad header: %w", name, line, err)
			}
			if h.Format > FormatVersion {
				return rec, fmt.Errorf("%s was written by a newer bondtop (format %d; this one reads up to %d)", name, h.Format, FormatVersion)
			}
			rec.Headers = append(rec.Headers, h)
			continue
		}
		if len(rec.Headers) == 0 {
			return rec, fmt.Errorf("%s is not a bondtop recording (no header line)", name)
		}
		var s collector.Snapshot
		if err := json.Unmarshal(raw, &s); err != nil {
			if !sc.Scan() {
				// The last line, and incomplete: the file was cut there.
				return rec, fmt.Errorf("%s: %w after %d snapshots (the recorder was stopped abruptly, or the copy is incomplete)", name, ErrTruncated, len(rec.Entries))
			}
			return rec, fmt.Errorf("%s, line %d: %w (%d snapshots read before it)", name, line, err, len(rec.Entries))
		}
		rec.Entries = append(rec.Entries, Entry{Raw: bytes.Clone(raw), Snapshot: &s})
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return rec, fmt.Errorf("%s: %w after %d snapshots (the recorder was stopped abruptly, or the copy is incomplete)", name, ErrTruncated, len(rec.Entries))
		}
		return rec, fmt.Errorf("%s, after %d snapshots: %w", name, len(rec.Entries), err)
	}
	return rec, nil
}
