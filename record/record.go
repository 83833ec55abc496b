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
	"io/fs"
	"os"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/internal/filekind"
)

// FormatVersion is the version a header line carries. A reader refuses
// versions newer than its own.
const FormatVersion = 1

// maxLine bounds one snapshot line: a host with many bonds of many slaves
// stays far below it; a corrupt file does not make the reader allocate
// without bound.
const maxLine = 16 << 20

// maxHeaderLine bounds the header line looked at before appending to an
// existing file; real headers are a few hundred bytes.
const maxHeaderLine = 64 << 10

// headerPrefix starts every header line (and no snapshot line).
const headerPrefix = `{"bondtop_recording"`

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
// session's header. A recording describes the host, so a new file is
// private (0600). Create never writes through a symbolic link at path (a
// link planted in a shared directory would make root write wherever it
// points), never writes to anything but a regular file, and appends only
// to a file that already is a bondtop recording: anything else is refused,
// naming what the file holds, and left as it was.
func Create(path string, h Header) (*Writer, error) {
	// O_NONBLOCK: opening a FIFO must not wait for a reader; it is then
	// refused below like any other file that is not regular.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("--record %s is a symbolic link: recordings are never written through links (name the file itself)", path)
		}
		return nil, fmt.Errorf("--record: %w", err)
	}
	if err := checkAppendable(f, path); err != nil {
		f.Close()
		return nil, err
	}
	w := &Writer{f: f, gz: gzip.NewWriter(f)}
	h.Format = FormatVersion
	if err := w.writeLine(h); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// checkAppendable accepts an empty regular file or a bondtop recording
// this version can extend; anything else is an error that says what the
// file is.
func checkAppendable(f *os.File, path string) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("--record: %w", err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("--record %s is %s, not a file: recordings are written only to regular files", path, filekind.Of(st.Mode()))
	}
	if st.Size() == 0 {
		return nil
	}
	found, h := sniff(io.NewSectionReader(f, 0, st.Size()))
	switch {
	case h == nil:
		return fmt.Errorf("--record %s holds %s, not a bondtop recording: it is left untouched (name a new file, or an earlier recording to append to)", path, found)
	case h.Format > FormatVersion:
		return fmt.Errorf("--record %s was written by a newer bondtop (format %d; this one writes %d): it is left untouched", path, h.Format, FormatVersion)
	}
	return nil
}

// sniff says what a file starts with: its header when it is a bondtop
// recording, else a short description ("a text file beginning ...").
func sniff(r io.Reader) (found string, h *Header) {
	br := bufio.NewReader(r)
	magic, _ := br.Peek(2)
	if !bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		start, _ := br.Peek(512)
		if utf8.Valid(start) && !bytes.ContainsRune(start, 0) {
			first, _, _ := bytes.Cut(start, []byte("\n"))
			return fmt.Sprintf("a text file beginning %q", truncate(string(first), 40)), nil
		}
		return "binary data (neither text nor gzip)", nil
	}
	gz, err := gzip.NewReader(br)
	if err != nil {
		return fmt.Sprintf("damaged gzip data (%v)", err), nil
	}
	first, err := bufio.NewReader(io.LimitReader(gz, maxHeaderLine)).ReadSlice('\n')
	if err != nil && len(first) == 0 {
		return fmt.Sprintf("gzip data that cannot be read (%v)", err), nil
	}
	var hdr Header
	if !bytes.HasPrefix(first, []byte(headerPrefix)) || json.Unmarshal(first, &hdr) != nil {
		return "gzip data that is not a bondtop recording (its first line is no recording header)", nil
	}
	return "a bondtop recording", &hdr
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
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
		if bytes.HasPrefix(raw, []byte(headerPrefix)) {
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
