package term

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bondtop/bondtop/ui/term/termtest"
	"github.com/gdamore/tcell/v2"
	"github.com/gdamore/tcell/v2/terminfo"
	"github.com/rivo/uniseg"
)

// recordingTty is a termtest.NullTty that keeps what is written to it.
type recordingTty struct {
	*termtest.NullTty
	out bytes.Buffer
}

func (t *recordingTty) Write(b []byte) (int, error) {
	t.out.Write(b)
	return len(b), nil
}

// scriptedScreen is a Screen on tcell's terminal screen over a
// recordingTty, with the painter (ti) or without (nil).
func scriptedScreen(t *testing.T, ti, painterTi *terminfo.Terminfo, width, height int) (*Screen, *recordingTty) {
	t.Helper()
	tty := &recordingTty{NullTty: termtest.NewNullTty(width, height)}
	screen, err := tcell.NewTerminfoScreenFromTtyTerminfo(tty, ti)
	if err != nil {
		t.Fatal(err)
	}
	if err := screen.Init(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(screen.Fini)
	return NewScreen(screen, painterTi), tty
}

// paintStyles are the styles the scripted frames draw with: the
// dashboard theme's, and the kinds of colour and attribute a terminal is sent.
func paintStyles() []tcell.Style {
	d := tcell.StyleDefault
	styles := []tcell.Style{
		d,
		d.Foreground(tcell.ColorGreen),
		d.Foreground(tcell.ColorRed).Bold(true),
		d.Foreground(tcell.ColorYellow).Background(tcell.ColorNavy),
		d.Foreground(tcell.PaletteColor(208)).Dim(true),
		d.Background(tcell.PaletteColor(236)),
		d.Foreground(tcell.NewRGBColor(250, 128, 20)),
		d.Foreground(tcell.NewRGBColor(10, 200, 90)).Background(tcell.NewRGBColor(30, 30, 40)),
		d.Reverse(true),
		d.Underline(true),
		d.Italic(true).StrikeThrough(true),
		d.Foreground(tcell.ColorReset),
	}
	// The dashboard's own: strong text in colour and in mono (NO_COLOR).
	styles = append(styles, d.Foreground(tcell.ColorWhite).Bold(true), d.Bold(true))
	return styles
}

// scriptFrame draws frame n: a border, rows of text in many styles, cells
// that change from frame to frame, cells left unwritten, now and then a
// wide character, the bottom-right cell and the cursor.
func scriptFrame(q *Screen, n int) {
	styles := paintStyles()
	r := rand.New(rand.NewPCG(7, uint64(n)))
	w, h := q.Screen.Size()
	q.Clear()
	border := styles[1+n/10%3]
	for x := range w {
		q.Put(x, 0, "─", border)
		q.Put(x, h-2, "─", border)
	}
	words := []string{"bond0", "e1", "up", "down", "802.3ad", "▁▂▃▅▇", "9.41 Gbit/s", "churned", "·", "✔", "layer3+4"}
	for y := 1; y < h-2; y++ {
		x := 0
		for x < w-2 && r.IntN(6) > 0 {
			word := words[r.IntN(len(words))]
			if n%5 == 0 && r.IntN(9) == 0 {
				word = "世界" // wide: the frame goes through tcell
			}
			q.PutStrStyled(x, y, word, styles[r.IntN(len(styles))])
			x += uniseg.StringWidth(word) + 1 + r.IntN(3)
		}
	}
	q.PutStrStyled(0, h-1, fmt.Sprintf("frame %d", n), styles[n%len(styles)])
	if n%4 == 1 {
		q.Put(w-1, h-1, "#", styles[2])
	}
	if n%3 == 0 {
		q.ShowCursor(n%w, 1+n%(h-3))
	} else {
		q.HideCursor()
	}
	q.Show()
}

// TestPainterMatchesTcell: the frames the painter sends leave a real
// terminal (tmux) showing exactly what tcell's Show leaves it showing,
// cell by cell with colours and attributes, after each of the checkpoints
// of a scripted run, for the terminals bondtop meets most.
func TestPainterMatchesTcell(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is missing: run scripts/test-deps.sh (make deps)")
		}
		t.Skip("tmux is missing: run scripts/test-deps.sh to run the terminal tests")
	}
	const width, height = 60, 14
	checkpoints := []int{1, 2, 3, 6, 15, 40}
	for _, term := range []string{"xterm-256color", "screen-256color", "tmux-256color", "xterm-direct"} {
		t.Run(term, func(t *testing.T) {
			ti, err := terminfo.LookupTerminfo(term)
			if err != nil {
				t.Fatalf("tcell has no terminfo for %s: %v", term, err)
			}
			painted, paintedTty := scriptedScreen(t, ti, ti, width, height)
			plain, plainTty := scriptedScreen(t, ti, nil, width, height)
			frame := 0
			for _, upTo := range checkpoints {
				for ; frame < upTo; frame++ {
					scriptFrame(painted, frame)
					scriptFrame(plain, frame)
				}
				want := renderInTmux(t, plainTty.out.Bytes(), width, height)
				got := renderInTmux(t, paintedTty.out.Bytes(), width, height)
				if got != want {
					t.Fatalf("after %d frames the painter's terminal shows\n%s\ntcell's shows\n%s", frame, got, want)
				}
			}
			if painted.painter == nil {
				t.Fatal("the painter never armed")
			}
			// Frames 0 (tcell's, before the painter arms), those with a wide
			// character (every fifth) and with the bottom-right cell may go
			// through tcell; the rest must be the painter's.
			if painted.painter.frames < frame/2 {
				t.Fatalf("the painter sent %d of %d frames", painted.painter.frames, frame)
			}
			t.Logf("%d frames, %d by the painter: %d bytes, tcell's Show %d", frame, painted.painter.frames, paintedTty.out.Len(), plainTty.out.Len())
		})
	}
}

// renderInTmux plays output to a tmux pane of width x height and returns
// the screen it leaves, with its colours and attributes (capture-pane -e).
func renderInTmux(t *testing.T, output []byte, width, height int) string {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "out")
	if err := os.WriteFile(file, output, 0o644); err != nil {
		t.Fatal(err)
	}
	socket := fmt.Sprintf("bondtop-paint-%d-%d", os.Getpid(), time.Now().UnixNano())
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-L", socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	done := filepath.Join(dir, "done")
	tmux("new-session", "-d", "-s", "p", "-x", strconv.Itoa(width), "-y", strconv.Itoa(height),
		fmt.Sprintf("cat %s; touch %s; sleep 60", file, done))
	defer func() { _ = exec.Command("tmux", "-L", socket, "kill-server").Run() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(done); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("tmux did not play the output in 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	screen := tmux("capture-pane", "-p", "-e", "-t", "p")
	cursor := tmux("display-message", "-p", "-t", "p", "#{cursor_x},#{cursor_y},#{cursor_flag}")
	return screen + "cursor " + cursor
}

// TestPainterStandsAside: where tcell's own handling is needed (a locale
// that is not UTF-8: box lines and blocks fall back to ASCII; NO_COLOR:
// tcell renders colour as reverse video; no terminfo), no painter arms
// and every frame is tcell's.
func TestPainterStandsAside(t *testing.T) {
	ti, err := terminfo.LookupTerminfo("xterm-256color")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, env, value string
		ti               *terminfo.Terminfo
	}{
		{"C locale", "LC_ALL", "C", ti},
		{"NO_COLOR", "NO_COLOR", "1", ti},
		{"no terminfo", "LC_ALL", "en_US.UTF-8", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(c.env, c.value)
			q, _ := scriptedScreen(t, ti, c.ti, 40, 10)
			for n := range 3 {
				scriptFrame(q, n)
			}
			if q.painter != nil {
				t.Fatalf("a painter armed with %s=%s", c.env, c.value)
			}
		})
	}
	t.Run("UTF-8", func(t *testing.T) {
		t.Setenv("LC_ALL", "en_US.UTF-8")
		q, _ := scriptedScreen(t, ti, ti, 40, 10)
		for n := range 3 {
			scriptFrame(q, n)
		}
		if q.painter == nil || q.painter.frames == 0 {
			t.Fatal("no painter on a UTF-8 xterm-256color")
		}
	})
}
