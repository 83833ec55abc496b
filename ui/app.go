package ui

import (
	"context"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/bondtop/bondtop/collector"
	"github.com/bondtop/bondtop/internal/cores"
	"github.com/bondtop/bondtop/model"
	"github.com/bondtop/bondtop/ui/format"
	"github.com/bondtop/bondtop/ui/term"
	"github.com/gdamore/tcell/v2"
	"github.com/gdamore/tcell/v2/terminfo"
	"github.com/rivo/tview"
)

// Feed is what the dashboard needs from a sampler; *collector.Sampler is
// one.
type Feed interface {
	// Run samples until ctx ends, handing each Snapshot to emit. It
	// continues after Options.First: its first snapshot comes an interval
	// (or a link change) later, never at once.
	Run(ctx context.Context, emit func(*model.Snapshot)) error
	History() *collector.History
	Interval() time.Duration
	// SetInterval changes the pace from any goroutine without blocking.
	SetInterval(time.Duration) time.Duration
}

// Player is a Feed that plays a recording (--replay): p pauses the
// playback itself, and < and > jump through it.
type Player interface {
	Pause(paused bool)
	// Seek moves by d of recorded time (negative: back) and emits the
	// snapshot found there.
	Seek(d time.Duration)
}

// A Focuser is a Feed that reads the bond on screen in more detail (a
// *collector.Sampler over the fleet): the dashboard names it whenever
// the selection changes.
type Focuser interface {
	Focus(bond string)
}

// A Recycler is a Feed that fills again the snapshots handed back to it
// (a *collector.Sampler with Options.Recycle): the dashboard hands back
// each one once nothing on screen points into it, on the event loop.
type Recycler interface {
	Release(*model.Snapshot)
}

// seekStep is how far < and > jump in a replay.
const seekStep = 10 * time.Second

// Options configure the dashboard.
type Options struct {
	Feed Feed
	// First is the snapshot taken before the screen opened (it proved the
	// asked-for bonds exist); the feed's Run continues one interval later.
	First *model.Snapshot
	// Bond is the bond to show first; "" takes the only bond or asks.
	Bond string
	// Screen is where to draw; nil opens the terminal.
	Screen tcell.Screen
	// terminfo describes Screen's terminal when it is a terminfo screen
	// made with it: the painter sends frames with it (Run sets it), to
	// frames when it is set (OpenFrameWriter), else to Screen's tty.
	terminfo *terminfo.Terminfo
	frames   io.WriteCloser
	// NoColor draws with attributes only; NO_COLOR in the environment
	// sets it too.
	NoColor bool
	// Load runs the load panel's tests (loadrun.Live, loadrun.Demo); when nil,
	// LoadUnavailable says why not, in words.
	Load            LoadRunner
	LoadUnavailable string
	// NoMouse leaves the mouse to the terminal (selecting text to copy).
	NoMouse bool
	// ListOrder, when set, is the order of the bond list: the bonds'
	// names as the source ranks them (the fleet: worst first); the list
	// is in natural order without it, and a bond the order lacks comes
	// after those it has.
	ListOrder func() []string
}

// intervalSteps are the paces + and - move between.
var intervalSteps = []time.Duration{
	100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second,
}

// The overlays, by name.
const (
	overlayHelp     = "help"
	overlayDetails  = "details"
	overlayLoad     = "load"
	overlayDiagnose = "diagnose"
	overlayFlows    = "flows"
	overlayChooser  = "chooser"
)

// dashboard wires the Model to the widgets and the keys. Everything but
// deliver runs on the tview event loop.
type dashboard struct {
	app *tview.Application
	// screen is what the dashboard draws on (nil when tview opens the
	// terminal itself, in tests that never draw).
	screen *term.Screen
	feed   Feed
	model  *Model
	th     *theme

	root                         *screenLayout
	header, footer, side, events *linesView
	// The footer's last lines and what they were made of.
	footerKey   footerKey
	footerLines []line
	// overlayPre holds the overlay's lines from placing it, for its draw.
	overlayPre   renderedLines
	table        *slaveTable
	rx, tx       *trafficChart
	overlay      *linesView
	overlayName  string
	overlayFrom  tview.Primitive // focus to return to
	visible      panes           // where the last draw put the panels
	chooser      chooserState
	chooserShown bool
	diag         diagState
	flows        flowsState
	flowRows     flowRowsMemo
	loadp        *loadPanel
	// listOrder orders the bond list (Options.ListOrder); nil: natural.
	// ordered is the list in that order as of the last snapshot applied:
	// the order changes only with a refresh of the source, and ranking
	// 10 000 names costs milliseconds, too much for every draw and key.
	listOrder func() []string
	ordered   []string
	// focused is the bond last named to a Focuser feed.
	focused string

	// ctx ends with the dashboard: load tests stop cleanly with it.
	ctx context.Context
	// cores gives load tests and drills every core while they run.
	cores *cores.Cores
	// posted are updates from other goroutines (load tests, drills)
	// waiting for the event loop; see post.
	posted mailbox[func()]
	// news carries the sampler's snapshots and its error to the event
	// loop: none (and none of their events) is dropped when the loop
	// falls behind; they are applied in one go.
	news mailbox[feedNews]
}

// feedNews is what the feed tells the event loop: a snapshot, or the
// error that ended the feed.
type feedNews struct {
	snap *model.Snapshot
	err  error
}

func newDashboard(o Options) *dashboard {
	th := newTheme(o.NoColor || noColorRequested())
	d := &dashboard{
		app:   tview.NewApplication(),
		feed:  o.Feed,
		model: NewModel(o.Feed.Interval()),
		th:    th,
		ctx:   context.Background(),
		loadp: newLoadPanel(o.Load, o.LoadUnavailable),
	}
	d.posted = mailbox[func()]{queue: d.queueDraw, handle: runAll}
	d.news = mailbox[feedNews]{queue: d.queueDraw, handle: d.applyNews}
	d.model.Bond = o.Bond
	d.listOrder = o.ListOrder
	_, d.model.Playback = o.Feed.(Player)
	if r, ok := o.Feed.(Recycler); ok {
		d.model.release = r.Release
	}
	d.header = newLinesView(th, "", d.renderHeader)
	d.footer = newLinesView(th, "", d.renderFooter)
	d.side = newLinesView(th, "LACP", d.renderSide)
	d.side.scrollable = true
	d.side.title = d.sideTitle
	d.events = newLinesView(th, "events", d.renderEvents)
	d.events.scrollable = true
	d.table = newSlaveTable(th, d.model)
	d.table.onEnter = func() { d.openOverlay(overlayDetails) }
	d.rx = newTrafficChart(th, "RX bit/s")
	d.tx = newTrafficChart(th, "TX bit/s")
	d.overlay = newLinesView(th, "help", d.renderPlacedOverlay)
	d.overlay.scrollable = true
	d.overlay.clear = true
	d.root = &screenLayout{Box: tview.NewBox(), d: d}
	d.app.SetRoot(d.root, true).SetFocus(d.table)
	d.app.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		out := d.handleKey(ev)
		d.focusSelected()
		return out
	})
	d.app.EnableMouse(!o.NoMouse)
	if o.Screen != nil {
		d.screen = term.NewScreen(o.Screen, o.terminfo)
		d.screen.Frames = o.frames
		d.app.SetScreen(d.screen)
	}
	if o.First != nil {
		d.apply([]*model.Snapshot{o.First})
	}
	return d
}

// Run shows the dashboard until the user quits or ctx ends.
func Run(ctx context.Context, o Options) error {
	if o.Screen == nil {
		screen, ti, err := term.OpenTerminal()
		if err != nil {
			return err
		}
		o.Screen, o.terminfo = screen, ti
		if ti != nil {
			o.frames = term.OpenFrameWriter()
		}
	}
	return newDashboard(o).run(ctx)
}

func (d *dashboard) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d.ctx = ctx
	d.cores = cores.Narrow()
	defer d.cores.Undo()

	var wg sync.WaitGroup
	wg.Go(func() {
		if err := d.feed.Run(ctx, d.deliver); err != nil {
			d.news.put(feedNews{err: err})
		}
	})
	wg.Go(func() {
		<-ctx.Done() // a signal, or the caller: leave the screen cleanly
		d.app.Stop()
	})
	err := d.app.Run()
	cancel()
	wg.Wait()
	return err
}

// deliver hands a snapshot to the event loop. It runs on the sampler's
// goroutine and never blocks.
func (d *dashboard) deliver(s *model.Snapshot) { d.news.put(feedNews{snap: s}) }

// post runs fn on the event loop, from any goroutine, without waiting.
func (d *dashboard) post(fn func()) { d.posted.put(fn) }

// queueDraw hands fn to the event loop and redraws after it.
func (d *dashboard) queueDraw(fn func()) { d.app.QueueUpdateDraw(fn) }

// runAll runs posted functions in the order they were posted.
func runAll(fns []func()) {
	for _, fn := range fns {
		fn()
	}
}

// applyNews applies every snapshot that arrived, then the feed's error if
// it ended; tview redraws afterwards.
func (d *dashboard) applyNews(news []feedNews) {
	var err error
	for _, n := range news {
		if n.snap != nil {
			d.model.Apply(n.snap)
		}
		if n.err != nil {
			err = n.err
		}
	}
	d.applied()
	if err != nil {
		d.model.SourceErr = err
	}
}

// apply applies snapshots in order (the first one, and tests').
func (d *dashboard) apply(batch []*model.Snapshot) {
	for _, s := range batch {
		d.model.Apply(s)
	}
	d.applied()
}

// applied follows the snapshots just applied to the Model.
func (d *dashboard) applied() {
	d.ordered = nil // the source's order may have moved with the snapshot
	d.model.Interval = d.feed.Interval()
	// Several bonds and none named: ask once which one to watch.
	if d.model.Bond == "" && len(d.model.Bonds()) > 1 && !d.chooserShown {
		d.chooserShown = true
		d.openChooser()
	}
	d.focusSelected()
}

// focusSelected tells a Focuser feed the bond on screen when it changed.
func (d *dashboard) focusSelected() {
	f, ok := d.feed.(Focuser)
	if !ok || d.model.Bond == d.focused {
		return
	}
	d.focused = d.model.Bond
	f.Focus(d.focused)
}

// prepareCharts points the graphs at the selected bond's history over the
// window that ends at the snapshot on screen (so a pause freezes them).
func (d *dashboard) prepareCharts() {
	m := d.model
	b := m.LastSeen()
	if b == nil || m.Snap == nil {
		d.rx.show(nil, nil, time.Time{}, time.Time{})
		d.tx.show(nil, nil, time.Time{}, time.Time{})
		return
	}
	to := m.Snap.Time
	from := windowStart(to, m.Window)
	for _, c := range []struct {
		chart *trafficChart
		tx    bool
	}{{d.rx, false}, {d.tx, true}} {
		lines := c.chart.lines
		if !sameSeries(lines, b) {
			lines = make([]chartLine, 0, len(b.Slaves)+1)
			lines = append(lines, chartLine{label: b.Name, style: d.th.bond, key: collector.Series{Bond: b.Name, Tx: c.tx}})
			for i := range b.Slaves {
				name := b.Slaves[i].Name
				lines = append(lines, chartLine{label: name, style: d.th.slave(i), key: collector.Series{Bond: b.Name, Slave: name, Tx: c.tx}})
			}
		}
		c.chart.show(d.feed.History(), lines, from, to)
	}
}

// sameSeries reports whether lines are already b's and its slaves', in
// order: then the chart keeps them (and its legend) from the last frame.
func sameSeries(lines []chartLine, b *model.BondSample) bool {
	if len(lines) != len(b.Slaves)+1 || lines[0].key.Bond != b.Name {
		return false
	}
	for i := range b.Slaves {
		if lines[i+1].key.Slave != b.Slaves[i].Name {
			return false
		}
	}
	return true
}

// handleKey is the global key map. It only changes the Model or the focus
// and returns at once: tview redraws after it.
func (d *dashboard) handleKey(ev *tcell.EventKey) *tcell.EventKey {
	if ev.Key() == tcell.KeyCtrlL {
		// Something else wrote to the terminal (a wall message, a kernel
		// message on a console): each frame sends only the cells that
		// changed, so the screen is sent whole again, as htop does.
		if d.screen != nil {
			d.screen.Sync()
		} else {
			d.app.Sync()
		}
		return nil
	}
	if d.overlayName != "" {
		return d.overlayKey(ev)
	}
	m := d.model
	switch ev.Key() {
	case tcell.KeyTab, tcell.KeyRight:
		d.cycleFocus(1)
		return nil
	case tcell.KeyBacktab, tcell.KeyLeft:
		d.cycleFocus(-1)
		return nil
	case tcell.KeyEnter:
		d.openOverlay(overlayDetails)
		return nil
	// htop's function keys, for the hands that know them: F1 help, F6
	// sort, F10 quit.
	case tcell.KeyF1:
		d.openOverlay(overlayHelp)
		return nil
	case tcell.KeyF6:
		m.CycleSort()
		return nil
	case tcell.KeyF10:
		d.app.Stop()
		return nil
	case tcell.KeyRune:
	default:
		return ev
	}
	switch r := ev.Rune(); r {
	case 'q':
		d.app.Stop()
	case '?':
		d.openOverlay(overlayHelp)
	case '[':
		d.stepBond(-1)
	case ']':
		d.stepBond(1)
	case 'p':
		m.TogglePause()
		if pl, ok := d.feed.(Player); ok {
			pl.Pause(m.Paused)
		}
	case '<', ',':
		if pl, ok := d.feed.(Player); ok {
			pl.Seek(-seekStep)
		}
	case '>', '.':
		if pl, ok := d.feed.(Player); ok {
			pl.Seek(seekStep)
		}
	case '+', '=':
		d.stepInterval(1)
	case '-', '_':
		d.stepInterval(-1)
	case 'g':
		m.CycleWindow()
	case 's':
		m.CycleSort()
	case 'l':
		d.openLoad()
	case 'd':
		d.openOverlay(overlayDiagnose)
	case 'f':
		d.openOverlay(overlayFlows)
	case 'b':
		if len(m.Bonds()) > 0 {
			d.openChooser()
		}
	default:
		if r >= '1' && r <= '9' {
			m.SelectBond(int(r - '1'))
			return nil
		}
		return ev // j, k and the like: the focused panel's
	}
	return nil
}

// overlayKey handles keys while an overlay is open: Esc closes it, q still
// quits, the chooser picks a bond, the rest scrolls the overlay.
func (d *dashboard) overlayKey(ev *tcell.EventKey) *tcell.EventKey {
	switch {
	case ev.Key() == tcell.KeyEscape:
		if d.overlayName != overlayChooser || !d.chooserEscape() {
			d.closeOverlay()
		}
		return nil
	case ev.Key() == tcell.KeyF10:
		// Before the panel: no panel types a function key, and the bond
		// list and the load form take every key they get.
		d.app.Stop()
		return nil
	case d.panelKey(ev):
		return nil
	case ev.Key() == tcell.KeyRune && ev.Rune() == 'q':
		d.app.Stop()
		return nil
	case (ev.Key() == tcell.KeyRune && ev.Rune() == '?' || ev.Key() == tcell.KeyF1) && d.overlayName == overlayHelp:
		d.closeOverlay()
		return nil
	}
	return ev
}

func (d *dashboard) openOverlay(name string) {
	if d.overlayName == "" {
		d.overlayFrom = d.app.GetFocus()
	}
	d.overlayName = name
	d.overlay.offset = 0
	titles := map[string]string{
		overlayHelp: "help", overlayDetails: "slave details", overlayLoad: "load",
		overlayDiagnose: "diagnosis", overlayFlows: "flows", overlayChooser: "choose a bond",
	}
	d.overlay.SetTitle(" " + titles[name] + " ")
	d.app.SetFocus(d.overlay)
}

func (d *dashboard) closeOverlay() {
	d.overlayName = ""
	back := d.overlayFrom
	if back == nil || back == d.overlay {
		back = d.table
	}
	d.app.SetFocus(back)
}

func (d *dashboard) renderOverlay(width, height int) []line {
	switch d.overlayName {
	case overlayHelp:
		return d.renderHelp(width, height)
	case overlayDetails:
		return d.renderDetails(width, height)
	case overlayLoad:
		return d.renderLoad(width, height)
	case overlayDiagnose:
		return d.renderDiagnosis(width, height)
	case overlayFlows:
		return d.renderFlows(width, height)
	case overlayChooser:
		return d.renderChooser(width, height)
	}
	return nil
}

// placeOverlay puts the open overlay where it goes in the area (x, y, w,
// h): docked (the load panel), or centred, as tall as its text needs.
func (d *dashboard) placeOverlay(x, y, w, h int) {
	if r, ok := d.dockRect(); ok && d.overlayName == overlayLoad && d.loadp.docked() {
		d.overlay.SetRect(x+r.x, y+r.y, r.w, r.h)
		return
	}
	ow := min(w-2, d.overlayWidth())
	if ow < 10 || h < 3 {
		ow, h = w, h+2 // tiny terminal: the overlay takes it all
	}
	ow = max(min(ow, w), 1)
	// Rendered once for its height at the largest it can be drawn: when
	// it fills that (the flows, a long diagnosis), the draw uses these
	// very lines instead of rendering them again.
	inner := max(h-4, 0)
	lines := d.renderOverlay(ow-2, inner)
	d.overlayPre = renderedLines{width: ow - 2, height: inner, lines: lines, valid: true}
	oh := max(min(h-2, len(lines)+2), min(h, 3))
	d.overlay.SetRect(x+(w-ow)/2, y+max((h-oh)/2, 0), ow, oh)
}

// renderedLines are an overlay's lines for a size, made while placing it.
type renderedLines struct {
	width, height int
	lines         []line
	valid         bool
}

// renderPlacedOverlay is the overlay's render: the lines made while
// placing it when the size is the same, else made anew.
func (d *dashboard) renderPlacedOverlay(width, height int) []line {
	pre := d.overlayPre
	d.overlayPre = renderedLines{}
	if pre.valid && pre.width == width && pre.height == height {
		return pre.lines
	}
	return d.renderOverlay(width, height)
}

// cycleFocus moves focus over the visible panels that take keys.
func (d *dashboard) cycleFocus(step int) {
	var order []tview.Primitive
	if d.visible.table.visible() {
		order = append(order, d.table)
	}
	if d.visible.side.visible() {
		order = append(order, d.side)
	}
	if d.visible.events.visible() {
		order = append(order, d.events)
	}
	if len(order) == 0 {
		return
	}
	i := slices.IndexFunc(order, func(p tview.Primitive) bool { return p.HasFocus() })
	d.app.SetFocus(order[((i+step)%len(order)+len(order))%len(order)])
}

// stepInterval moves the sampler's pace to the next step up or down.
func (d *dashboard) stepInterval(dir int) {
	cur := d.feed.Interval()
	next := cur
	if dir > 0 {
		for _, s := range intervalSteps {
			if s > cur {
				next = s
				break
			}
		}
	} else {
		for _, s := range slices.Backward(intervalSteps) {
			if s < cur {
				next = s
				break
			}
		}
	}
	d.model.Interval = d.feed.SetInterval(next)
}

func (d *dashboard) sideTitle() string {
	b := d.model.Selected()
	switch {
	case b == nil:
		return "bond"
	case b.Is8023AD():
		return "LACP"
	case format.Deref(b.Mode) == "active-backup":
		return "failover"
	}
	return format.Deref(b.Mode)
}

// panelKey gives a key to the open panel that takes keys of its own;
// true when it used it.
func (d *dashboard) panelKey(ev *tcell.EventKey) bool {
	switch d.overlayName {
	case overlayDiagnose:
		return d.diagnosisKey(ev)
	case overlayFlows:
		return d.flowsKey(ev)
	case overlayLoad:
		return d.loadKey(ev)
	case overlayChooser:
		return d.chooserKey(ev)
	}
	return false
}

// overlayWidth is the widest an overlay gets: the tables of flows and
// findings use a large terminal's width, text reads best at 80.
func (d *dashboard) overlayWidth() int {
	switch d.overlayName {
	case overlayFlows, overlayDiagnose, overlayChooser:
		return 120
	}
	return 80
}
