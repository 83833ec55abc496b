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
//
// A recording may come from another host, and bondtop often runs as root:
// Create writes only to a regular file that is new, empty or already a
// recording, never through a symbolic link, and makes new files private;
// Reader streams a file of any size in bounded memory and refuses
// snapshot times that go back or lie in the future.
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

	"github.com/bondtop/bondtop/internal/filekind"
	"github.com/bondtop/bondtop/internal/printable"
	"github.com/bondtop/bondtop/model"
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
func (w *Writer) Write(s *model.Snapshot) error { return w.writeLine(s) }

func (w *Writer) writeLine(v any) error {
	w.buf.Reset()
	if err := json.NewEncoder(&w.buf).Encode(v); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	// A recording is read with zcat as often as with --replay: raw C1 and
	// bidi controls (which encoding/json leaves) are written escaped.
	if _, err := w.gz.Write(printable.JSON(w.buf.Bytes())); err != nil {
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

// Entry is one recorded snapshot: the exact line that was written, its
// decoded form (nil when the Reader reads times only), and where it was.
type Entry struct {
	Raw      []byte
	Snapshot *model.Snapshot
	Time     time.Time
	// Line is the line of the uncompressed text (zcat FILE) it was on.
	Line int
}

// ErrTruncated is wrapped by the error of a recording that ends in the
// middle of a line or a gzip member: the snapshots before it were read.
var ErrTruncated = errors.New("the recording is cut short")

// ErrBadTime is wrapped by the error for a snapshot whose time goes back
// or lies in the future: replay plays recorded time, so such a file would
// play out of order or wait forever.
var ErrBadTime = errors.New("impossible timestamp")

// maxAhead is how far past this host's clock a snapshot may be (clocks of
// two hosts disagree a little; a recording from next year is damage).
const maxAhead = 24 * time.Hour

// Reader reads a recording one snapshot at a time, so replaying holds one
// line (at most maxLine) whatever the size of the file. It checks as it
// goes that snapshot times never go back and are not in the future.
type Reader struct {
	// TimesOnly skips decoding snapshots: Next fills Time, Line and
	// Session, not Snapshot (an index of a recording costs a fraction of
	// decoding it).
	TimesOnly bool
	// Now is the clock future timestamps are judged by (time.Now if nil).
	Now func() time.Time

	name     string
	closer   io.Closer
	sc       *bufio.Scanner
	line     int
	session  int
	header   *Header
	last     time.Time // the previous snapshot's time
	read     int       // snapshots returned
	err      error     // sticky: every later Next returns it
	lookedAt bool      // sc holds a line not yet consumed (after a lookahead)
	skipping bool      // Skip is counting lines: no decoding, no checks
}

// Open opens a recording for reading; Close releases it.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--replay: %w", err)
	}
	r, err := NewReader(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// NewReader reads a recording from r; name is for messages.
func NewReader(r io.Reader, name string) (*Reader, error) {
	gz, err := gzip.NewReader(bufio.NewReader(r))
	if err != nil {
		return nil, fmt.Errorf("%s is not a bondtop recording (%v)", name, err)
	}
	sc := bufio.NewScanner(gz)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	return &Reader{name: name, sc: sc, session: -1}, nil
}

// Close closes the file Open opened.
func (r *Reader) Close() error {
	if r.closer == nil {
		return nil
	}
	return r.closer.Close()
}

// Header is the header of the session being read (nil before the first).
func (r *Reader) Header() *Header { return r.header }

// Read counts the snapshots returned so far.
func (r *Reader) Read() int { return r.read }

// Next returns the next snapshot, io.EOF after the last one, or an error
// that says where the file is damaged; the error is returned again by
// every later call.
func (r *Reader) Next() (Entry, error) {
	if r.err != nil {
		return Entry{}, r.err
	}
	e, err := r.next()
	if err != nil {
		r.err = err
		return Entry{}, err
	}
	r.read++
	return e, nil
}

// Skip moves past n snapshots without decoding or checking them: they
// were checked by an earlier pass over the same file (the replay
// dashboard's index), and a jump should cost no more than reading.
func (r *Reader) Skip(n int) error {
	r.skipping = true
	defer func() { r.skipping = false }()
	for range n {
		if _, err := r.Next(); err != nil {
			return err
		}
	}
	return nil
}

func (r *Reader) scan() bool {
	if r.lookedAt {
		r.lookedAt = false
		return true
	}
	if !r.sc.Scan() {
		return false
	}
	r.line++
	return true
}

func (r *Reader) next() (Entry, error) {
	for r.scan() {
		raw := r.sc.Bytes()
		if bytes.HasPrefix(raw, []byte(headerPrefix)) {
			var h Header
			if err := json.Unmarshal(raw, &h); err != nil {
				return Entry{}, fmt.Errorf("%s, line %d: bad header: %w", r.name, r.line, err)
			}
			if h.Format > FormatVersion {
				return Entry{}, fmt.Errorf("%s was written by a newer bondtop (format %d; this one reads up to %d)", r.name, h.Format, FormatVersion)
			}
			r.header = &h
			r.session++
			continue
		}
		if r.header == nil {
			return Entry{}, fmt.Errorf("%s is not a bondtop recording (no header line)", r.name)
		}
		e := Entry{Line: r.line}
		if r.skipping {
			return e, nil
		}
		var err error
		if r.TimesOnly {
			var t struct {
				Time time.Time `json:"time"`
			}
			err = json.Unmarshal(raw, &t)
			e.Time = t.Time
		} else {
			var s model.Snapshot
			if err = json.Unmarshal(raw, &s); err == nil {
				e.Raw, e.Snapshot, e.Time = bytes.Clone(raw), &s, s.Time
			}
		}
		if err != nil {
			line := r.line
			if !r.scan() {
				// The last line, and incomplete: the file was cut there.
				return Entry{}, r.cutShort()
			}
			r.lookedAt = true
			return Entry{}, fmt.Errorf("%s, line %d: %w (%d snapshots read before it)", r.name, line, err, r.read)
		}
		if err := r.checkTime(e.Time); err != nil {
			return Entry{}, err
		}
		r.last = e.Time
		return e, nil
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return Entry{}, r.cutShort()
		}
		return Entry{}, fmt.Errorf("%s, after %d snapshots: %w", r.name, r.read, err)
	}
	if r.header == nil {
		return Entry{}, fmt.Errorf("%s is not a bondtop recording (no header line)", r.name)
	}
	return Entry{}, io.EOF
}

func (r *Reader) cutShort() error {
	return fmt.Errorf("%s: %w after %d snapshots (the recorder was stopped abruptly, or the copy is incomplete)", r.name, ErrTruncated, r.read)
}

// checkTime refuses a snapshot time that is missing, earlier than the
// snapshot before it, or far in the future.
func (r *Reader) checkTime(t time.Time) error {
	const layout = "2006-01-02 15:04:05.000 MST"
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	switch {
	case t.IsZero():
		return fmt.Errorf("%s, line %d: %w: the snapshot has no time (%d snapshots read before it)", r.name, r.line, ErrBadTime, r.read)
	case t.Before(r.last):
		return fmt.Errorf("%s, line %d: %w: the snapshot at %s is earlier than the one before it (%s); a recording's times only go forward (%d snapshots read before it)",
			r.name, r.line, ErrBadTime, t.UTC().Format(layout), r.last.UTC().Format(layout), r.read)
	case t.After(now().Add(maxAhead)):
		return fmt.Errorf("%s, line %d: %w: the snapshot at %s is in the future (this host's clock says %s) (%d snapshots read before it)",
			r.name, r.line, ErrBadTime, t.UTC().Format(layout), now().UTC().Format(layout), r.read)
	}
	return nil
}

// Recording is a whole recording in memory: for tests and small files
// (replay streams with a Reader).
type Recording struct {
	Headers []Header
	Entries []Entry
}

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

// ReadFrom reads a whole recording from r; name is for messages.
func ReadFrom(r io.Reader, name string) (*Recording, error) {
	rec := &Recording{}
	rd, err := NewReader(r, name)
	if err != nil {
		return rec, err
	}
	session := -1
	for {
		e, err := rd.Next()
		if h := rd.Header(); h != nil && rd.session != session {
			session = rd.session
			rec.Headers = append(rec.Headers, *h)
		}
		if err == io.EOF {
			return rec, nil
		}
		if err != nil {
			return rec, err
		}
		rec.Entries = append(rec.Entries, e)
	}
}
