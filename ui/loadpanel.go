package ui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bondtop/bondtop/diagnose"
	"github.com/bondtop/bondtop/internal/units"
	"github.com/bondtop/bondtop/load"
	"github.com/bondtop/bondtop/loadrun"
	"github.com/bondtop/bondtop/model"
	"github.com/bondtop/bondtop/ui/format"
	"github.com/gdamore/tcell/v2"
)

// The load panel (key l): a form for a test, then the test's streams
// docked under the graphs, so the admin watches each stream land on its
// slave. Everything here runs on the event loop; the runner's Start (DNS,
// route lookup) and the test's intervals come back through post.

// EventLoadTest is the events log's kind for a finished load test.
const EventLoadTest model.EventKind = "load_test"

// The form's fields, in order.
const (
	fieldTarget = iota
	fieldPort
	fieldStreams
	fieldDuration
	fieldProto
	fieldDirection
	fieldRate
	fieldStrategy
	fieldFirstPort
	numFields
)

var fieldNames = [numFields]string{"target", "port", "streams", "duration s", "protocol", "direction", "rate bit/s", "ports", "first port"}

// loadPanel is the form and the test it started.
type loadPanel struct {
	runner LoadRunner
	// unavailable says why no test can run here (--root, --replay).
	unavailable string

	text      [numFields]string // the text fields' contents
	proto     load.Protocol
	direction load.Direction
	strategy  load.Strategy
	slave     string // for load.OneSlave
	field     int
	formErr   string
	editing   bool // the form is shown (else the test)
	confirm   bool // asking whether to stop the running test first
	starting  bool // Start runs off the loop

	// The current test; gen tells its late news from an older test's.
	gen      int
	req      loadrun.Request
	bond     string
	run      *loadrun.Run
	startErr error
	rows     []load.StreamStats
	sent     load.StreamStats
	received load.StreamStats
	elapsed  time.Duration
	summary  *load.Summary
	// before holds the bond's slave byte counters when the test started;
	// moved is what each slave carried during it (all traffic, not only
	// the test's): the measured side of the predicted slaves.
	before map[string][2]uint64
	moved  []load.SlaveDelta
	runErr error
	done   bool

	// drill is the failover drill Ctrl-F starts from the panel.
	drill drillState
}

func newLoadPanel(runner LoadRunner, unavailable string) *loadPanel {
	p := &loadPanel{runner: runner, unavailable: unavailable, editing: true}
	p.text[fieldPort] = strconv.Itoa(load.DefaultPort)
	p.text[fieldStreams] = "4"
	p.text[fieldDuration] = "10"
	return p
}

// running reports a test between Start and its end.
func (p *loadPanel) running() bool { return p.starting || (p.run != nil && !p.done) }

// docked reports whether the panel shows a test (under the graphs) rather
// than the form.
func (p *loadPanel) docked() bool {
	return !p.editing && p.unavailable == "" && p.runner != nil && p.drill.step == drillOff
}

// openLoad opens the panel: the running or last test, else the form.
func (d *dashboard) openLoad() {
	p := d.loadp
	if p.run == nil && !p.starting {
		p.editing = true
	}
	if p.text[fieldTarget] == "" {
		if tp, ok := p.runner.(targetProposer); ok {
			if b := d.model.Selected(); b != nil {
				p.text[fieldTarget] = tp.ProposeTarget(b)
			}
		}
	}
	d.openOverlay(overlayLoad)
}

// loadKey handles the panel's keys; false passes the key on (scrolling,
// q to quit outside the form).
func (d *dashboard) loadKey(ev *tcell.EventKey) bool {
	p := d.loadp
	if p.unavailable != "" || p.runner == nil {
		return false
	}
	if ev.Key() == tcell.KeyCtrlF {
		d.openDrill()
		return true
	}
	if p.drill.step != drillOff {
		return d.drillKey(ev)
	}
	if p.confirm {
		if ev.Key() == tcell.KeyRune && (ev.Rune() == 'y' || ev.Rune() == 'Y') {
			p.confirm = false
			d.stopLoad()
			d.startLoad()
		} else if ev.Key() == tcell.KeyRune || ev.Key() == tcell.KeyEnter {
			// Anything else keeps the running test, and shows it.
			p.confirm, p.editing = false, !p.running()
		}
		return true
	}
	if !p.editing {
		if ev.Key() != tcell.KeyRune {
			return ev.Key() == tcell.KeyEnter && d.editLoad()
		}
		switch ev.Rune() {
		case 'x':
			d.stopLoad()
		case 'n':
			d.editLoad()
		default:
			return false
		}
		return true
	}
	// Any edit answers the last error; Enter may set a new one.
	p.formErr = ""
	switch ev.Key() {
	case tcell.KeyUp, tcell.KeyBacktab:
		p.field = (p.field + numFields - 1) % numFields
	case tcell.KeyDown, tcell.KeyTab:
		p.field = (p.field + 1) % numFields
	case tcell.KeyLeft:
		d.cycleChoice(-1)
	case tcell.KeyRight:
		d.cycleChoice(1)
	case tcell.KeyBackspace, tcell.KeyBackspace2:
		if t := p.text[p.field]; t != "" && isTextField(p.field) {
			r := []rune(t)
			p.text[p.field] = string(r[:len(r)-1])
		}
	case tcell.KeyCtrlU:
		if isTextField(p.field) {
			p.text[p.field] = ""
		}
	case tcell.KeyEnter:
		d.submitLoad()
	case tcell.KeyRune:
		if !isTextField(p.field) {
			if ev.Rune() == ' ' {
				d.cycleChoice(1)
				return true
			}
			return ev.Rune() != 'q' // q still quits from a choice field
		}
		if len(p.text[p.field]) < 253 {
			p.text[p.field] += string(ev.Rune())
		}
	default:
		return false
	}
	return true
}

func isTextField(f int) bool { return f != fieldProto && f != fieldDirection && f != fieldStrategy }

// editLoad shows the form again (the test, if any, keeps running).
func (d *dashboard) editLoad() bool {
	d.loadp.editing, d.loadp.field = true, fieldTarget
	d.overlay.offset = 0
	return true
}

// strategyChoices are the port strategies the form cycles through, one
// "one slave" entry per slave of the selected bond.
func (d *dashboard) strategyChoices() []loadrun.Request {
	out := []loadrun.Request{{Strategy: load.Spread}}
	if b := d.model.Selected(); b != nil {
		for i := range b.Slaves {
			out = append(out, loadrun.Request{Strategy: load.OneSlave, Slave: b.Slaves[i].Name})
		}
	}
	return append(out, loadrun.Request{Strategy: load.FixedPorts}, loadrun.Request{Strategy: load.KernelPorts})
}

func (d *dashboard) cycleChoice(step int) {
	p := d.loadp
	wrapN := func(i, n int) int { return ((i+step)%n + n) % n }
	switch p.field {
	case fieldProto:
		p.proto = load.Protocol(wrapN(int(p.proto), 2))
	case fieldDirection:
		p.direction = load.Direction(wrapN(int(p.direction), 3))
	case fieldStrategy:
		cs := d.strategyChoices()
		i := slices.IndexFunc(cs, func(r loadrun.Request) bool { return r.Strategy == p.strategy && r.Slave == p.slave })
		c := cs[wrapN(max(i, 0), len(cs))]
		p.strategy, p.slave = c.Strategy, c.Slave
	}
}

// formRequest turns the form into a request, or says what is wrong with
// which field. It does no I/O: the host is only checked for its shape
// here; resolving it is the runner's, off the event loop.
func (p *loadPanel) formRequest() (loadrun.Request, int, error) {
	req := loadrun.Request{Strategy: p.strategy, Slave: p.slave}
	c := &req.Config
	host, port, err := load.ParseTarget(p.text[fieldTarget])
	if err != nil {
		return req, fieldTarget, err
	}
	c.Target, c.Port = host, port
	num := func(f int, lo, hi int) (int, error) {
		s := strings.TrimSpace(p.text[f])
		n, err := strconv.Atoi(s)
		if err != nil || n < lo || n > hi {
			return 0, fmt.Errorf("%q: give a whole number from %d to %d", s, lo, hi)
		}
		return n, nil
	}
	if c.Port == 0 {
		n, err := num(fieldPort, 1, 65535)
		if err != nil {
			return req, fieldPort, err
		}
		c.Port = uint16(n)
	}
	if c.Streams, err = num(fieldStreams, 1, load.MaxStreams); err != nil {
		return req, fieldStreams, err
	}
	secs, err := num(fieldDuration, 0, int(load.MaxDuration.Seconds()))
	if err != nil {
		return req, fieldDuration, fmt.Errorf("%w (0 runs until stopped, at most an hour)", err)
	}
	if secs == 0 {
		c.UntilStopped = true
	} else {
		c.Duration = time.Duration(secs) * time.Second
	}
	c.Protocol, c.Direction = p.proto, p.direction
	if s := strings.TrimSpace(p.text[fieldRate]); s != "" {
		if c.Rate, err = load.ParseRate(s); err != nil {
			return req, fieldRate, err
		}
	}
	switch p.strategy {
	case load.FixedPorts:
		n, err := num(fieldFirstPort, 1, 65535)
		if err != nil {
			return req, fieldFirstPort, err
		}
		c.FirstPort = uint16(n)
	case load.OneSlave:
		if p.slave == "" {
			return req, fieldStrategy, errors.New("choose the slave with ← →")
		}
	}
	if err := c.Validate(); err != nil {
		return req, fieldTarget, err
	}
	return req, -1, nil
}

// submitLoad validates the form and starts the test, asking first when
// one is running.
func (d *dashboard) submitLoad() {
	p := d.loadp
	req, field, err := p.formRequest()
	if err != nil {
		p.formErr = fieldNames[field] + ": " + err.Error()
		p.field = field
		return
	}
	p.req = req
	if p.running() {
		p.confirm = true
		return
	}
	d.startLoad()
}

// startLoad starts p.req: the runner works in a goroutine and its answer
// comes back through post. Nothing here waits.
func (d *dashboard) startLoad() {
	p := d.loadp
	p.gen++
	gen, req := p.gen, p.req
	p.starting, p.editing, p.done = true, false, false
	p.run, p.startErr, p.rows, p.summary, p.runErr, p.elapsed = nil, nil, nil, nil, nil, 0
	p.sent, p.received = load.StreamStats{}, load.StreamStats{}
	// The runner reads the bond off the event loop, while later snapshots
	// arrive and the feed may fill this one again (Recycler): it gets a
	// copy of its own.
	b := d.model.Selected()
	if b != nil {
		b = b.Clone()
	}
	p.bond = d.model.Bond
	ctx, runner := d.ctx, p.runner
	release := d.cores.Acquire()
	go func() {
		run, err := runner.Start(ctx, b, req)
		if err != nil {
			release()
		}
		d.post(func() { d.loadStarted(gen, run, err, release) })
	}()
}

// loadStarted takes the started test (or why not); release gives the
// cores back when the test ends.
func (d *dashboard) loadStarted(gen int, run *loadrun.Run, err error, release func()) {
	p := d.loadp
	if gen != p.gen {
		if run != nil {
			run.Test.Stop() // superseded while it started
			go func() { <-run.Test.Done(); release() }()
		}
		return
	}
	p.starting = false
	if err != nil {
		p.startErr = err
		p.done = true
		p.editing = true
		p.formErr = "not started: " + err.Error()
		return
	}
	p.run = run
	p.before, p.moved = nil, nil
	if b := d.sampleOf(run.Bond); b != nil {
		p.before = load.SlaveBytes(diagnose.BondOf(b))
	}
	// One goroutine per test follows it: intervals as they come, then the
	// result. post never blocks it.
	go func() {
		for iv := range run.Test.Intervals() {
			d.post(func() { d.loadInterval(gen, iv) })
		}
		<-run.Test.Done()
		release()
		sum, err := run.Test.Result()
		d.post(func() { d.loadDone(gen, run, sum, err) })
	}()
}

func (d *dashboard) loadInterval(gen int, iv load.Interval) {
	p := d.loadp
	if gen != p.gen {
		return
	}
	p.rows, p.sent, p.received, p.elapsed = iv.Streams, iv.Sent, iv.Received, iv.End
}

func (d *dashboard) loadDone(gen int, run *loadrun.Run, sum load.Summary, err error) {
	p := d.loadp
	// Every test's end goes to the events log, a superseded one's too.
	d.model.addEvents([]model.Event{{Time: d.now(), Bond: orText(run.Bond, d.model.Bond), Kind: EventLoadTest,
		Message: loadSummaryText(run, &sum, err)}})
	if gen != p.gen {
		return
	}
	p.done, p.runErr = true, err
	if b := d.sampleOf(run.Bond); b != nil && p.before != nil {
		p.moved = load.SlaveDeltas(diagnose.BondOf(b), p.before, load.SlaveBytes(diagnose.BondOf(b)))
	}
	if err == nil {
		p.summary = &sum
	}
}

// sampleOf is the named bond in the snapshot on screen, or nil.
func (d *dashboard) sampleOf(bond string) *model.BondSample {
	if d.model.Snap == nil || bond == "" {
		return nil
	}
	return d.model.Snap.Bond(bond)
}

// stopLoad ends the running test cleanly; its end arrives later.
func (d *dashboard) stopLoad() {
	p := d.loadp
	if p.starting {
		p.gen++ // its run is stopped as soon as it arrives
		p.starting, p.done = false, true
		p.runErr = load.ErrStopped
		return
	}
	if p.run != nil && !p.done {
		p.run.Test.Stop()
	}
}

// now is the time of the snapshot on screen (the sampler's clock, a fake
// one in tests), else the wall's.
func (d *dashboard) now() time.Time {
	if d.model.Snap != nil {
		return d.model.Snap.Time
	}
	return time.Now()
}

// loadSummaryText is the one-line result for the events log.
func loadSummaryText(run *loadrun.Run, sum *load.Summary, err error) string {
	if err != nil {
		return fmt.Sprintf("load test to %s failed: %v", run.Target, err)
	}
	parts := []string{}
	for _, t := range []struct {
		what string
		s    *load.StreamSummary
	}{{"sent", &sum.Sent}, {"received", &sum.Received}} {
		if t.s.ReceivedBytes > 0 || t.s.SentBytes > 0 {
			parts = append(parts, t.what+" "+units.Bits(t.s.BitsPerSecond))
		}
	}
	stopped := ""
	if sum.Stopped {
		stopped = ", stopped"
	}
	return fmt.Sprintf("load test to %s: %d %s streams, %s in %.1f s%s; %s", run.Target, len(sum.Streams), sum.Protocol,
		orText(strings.Join(parts, ", "), "nothing moved"), sum.Duration.Seconds(), stopped, streamsPerSlave(sum.Streams, run))
}

// streamsPerSlave says where the streams went: "ens1f0 2, ens1f1 2".
func streamsPerSlave(ss []load.StreamSummary, run *loadrun.Run) string {
	counts := map[string]int{}
	var order []string
	for _, s := range ss {
		name := slaveOf(s.StreamInfo, run)
		if name == "" {
			name = "slave unknown"
		}
		if counts[name] == 0 {
			order = append(order, name)
		}
		counts[name]++
	}
	slices.Sort(order)
	out := make([]string, len(order))
	for i, n := range order {
		out[i] = n + " " + strconv.Itoa(counts[n])
	}
	return "streams per slave: " + orText(strings.Join(out, ", "), "none")
}

// slaveOf is a stream's predicted slave: planned, else from its port.
func slaveOf(info load.StreamInfo, run *loadrun.Run) string {
	if info.PredictedSlave != "" || run == nil || run.Predict == nil || !info.Sender {
		return info.PredictedSlave
	}
	return run.Predict(info.SourcePort)
}

func (d *dashboard) renderLoad(width, height int) []line {
	th := d.th
	p := d.loadp
	if p.unavailable != "" || p.runner == nil {
		out := []line{{{"Load test: not available here", th.strong}}, nil}
		for _, text := range wrap(orText(p.unavailable, "no load engine"), width, "") {
			out = append(out, line{{text, th.base}})
		}
		return append(out, nil, line{{"Esc closes", th.dim}})
	}
	if p.drill.step != drillOff {
		return d.renderDrill(width)
	}
	if p.confirm {
		left := ""
		if p.req.Config.Duration > 0 && p.run != nil {
			left = fmt.Sprintf(" (%s of %s done)", format.Duration(p.elapsed.Round(time.Second)), format.Duration(p.req.Config.Duration))
		}
		return []line{
			{{"A test is running" + left + ".", th.warn}},
			{{"Stop it and start the new one? ", th.base}, {"y", th.key}, {" yes  ", th.base}, {"n", th.key}, {" no", th.base}},
		}
	}
	if p.editing {
		return d.renderLoadForm(width)
	}
	return d.renderLoadRun(width, height)
}

func (d *dashboard) renderLoadForm(width int) []line {
	th, p := d.th, d.loadp
	bond := orText(d.model.Bond, "no bond")
	out := []line{{{"New load test over " + bond, th.strong}, {"  ↑↓ field  ←→ choose  Enter start  Esc close", th.dim}}, nil}
	value := func(f int) string {
		switch f {
		case fieldProto:
			return p.proto.String()
		case fieldDirection:
			return p.direction.String()
		case fieldStrategy:
			if p.strategy == load.OneSlave {
				return "one slave: " + orText(p.slave, "?")
			}
			return p.strategy.String()
		}
		return p.text[f]
	}
	hint := [numFields]string{
		fieldTarget: "runs iperf3 -s or bondtop serve", fieldDuration: "0 = until stopped (1 h at most)",
		fieldRate: "per stream: 500M, 2.5G; empty: no cap", fieldStreams: "1 to " + strconv.Itoa(load.MaxStreams),
		fieldStrategy: "source ports by the bond's hash", fieldFirstPort: "for fixed first port",
	}
	for f := range numFields {
		v := value(f)
		st := th.base
		if !isTextField(f) {
			v = "‹ " + v + " ›"
		}
		if f == p.field {
			st = th.selected
			if isTextField(f) {
				v += "▏"
			}
		}
		row := line{{padRight(fieldNames[f], 12), th.dim}, {padRight(v, 24), st}}
		if h := hint[f]; h != "" && width-row.width() > 12 {
			row = row.add("  "+truncate(h, width-row.width()-2), th.dim)
		}
		out = append(out, row)
	}
	out = append(out, nil)
	switch {
	case p.formErr != "":
		for _, text := range wrap("✗ "+p.formErr, width, "  ") {
			out = append(out, line{{text, th.bad}})
		}
	case p.running():
		out = append(out, line{{"A test is running: Enter asks before replacing it; Esc shows it.", th.warn}})
	default:
		out = append(out, line{{"Traffic goes only to the target; the test always ends.", th.dim}})
	}
	return append(out, line{{"Ctrl-F", th.key}, {" failover drill of " + bond + " against the target", th.dim}})
}

func (d *dashboard) renderLoadRun(width, height int) []line {
	th, p := d.th, d.loadp
	c := p.req.Config
	what := fmt.Sprintf("load: %d %s %s streams → %s", c.Streams, c.Protocol, c.Direction, c.Target)
	if p.run != nil {
		what = fmt.Sprintf("load: %d %s %s streams → %s", c.Streams, c.Protocol, c.Direction, p.run.Target)
		if p.run.Bond != "" {
			what += " via " + p.run.Bond
		}
	}
	var state line
	switch {
	case p.starting:
		state = line{{"starting…", th.warn}}
	case !p.done:
		total := "until stopped"
		if !c.UntilStopped {
			total = format.Duration(c.Duration)
		}
		state = line{{"running " + format.Duration(p.elapsed.Round(time.Second)) + " / " + total, th.good}}
	case p.runErr != nil:
		state = line{{"failed", th.bad}}
	default:
		state = line{{"done", th.strong}}
	}
	keys := "x stop  n new  Esc hide"
	if p.done {
		keys = "n new  Esc close"
	}
	out := []line{pack(width, line{{what, th.strong}}, state, line{{keys, th.dim}})}
	// Notes wrap when there is room; docked at 80x24 the stream rows
	// come first and a note takes one line (the events log keeps the
	// summary).
	if p.run != nil {
		for _, n := range p.run.Notes {
			if height >= 10 {
				for _, text := range wrap("! "+n, width, "  ") {
					out = append(out, line{{text, th.warn}})
				}
			} else {
				out = append(out, line{{truncate("! "+n, width), th.warn}})
			}
		}
	}
	if p.runErr != nil {
		for _, text := range wrap(loadErrWords(p.runErr), width, "  ") {
			out = append(out, line{{text, th.bad}})
		}
	}
	// Stream rows, several to a line when the panel is wide: the docked
	// panel has few rows at 80x24.
	index := map[string]int{}
	if b := d.model.Selected(); b != nil {
		for i := range b.Slaves {
			index[b.Slaves[i].Name] = i
		}
	}
	type cell struct {
		info  load.StreamInfo
		bps   float64
		retr  int64
		bytes uint64
	}
	var cells []cell
	if p.summary != nil {
		for _, s := range p.summary.Streams {
			cells = append(cells, cell{s.StreamInfo, s.BitsPerSecond, s.Retransmits, s.ReceivedBytes})
		}
	} else {
		for _, s := range p.rows {
			cells = append(cells, cell{s.StreamInfo, s.BitsPerSecond, s.Retransmits, s.Bytes})
		}
	}
	const cellW = 37
	cols := max(1, (width+2)/(cellW+2))
	var row line
	for i, c := range cells {
		slave := slaveOf(c.info, p.run)
		st := th.dim
		if j, ok := index[slave]; ok {
			st = th.slave(j)
		}
		dir := "tx"
		if !c.info.Sender {
			dir = "rx"
		}
		retr := ""
		if c.retr >= 0 {
			retr = " retr " + strconv.FormatInt(c.retr, 10)
		}
		item := line{{padRight(fmt.Sprintf("#%-2d :%d", c.info.ID, c.info.SourcePort), 11), th.base},
			{padRight(orText(slave, "-"), 9), st},
			{dir + " " + padLeft(units.Short(c.bps), 6) + retr, th.base}}
		if i%cols != 0 {
			row = append(row, span{padRight("", cellW+2-prevWidth(row, cellW+2)), th.base})
		}
		row = append(row, item...)
		if i%cols == cols-1 || i == len(cells)-1 {
			out = append(out, row)
			row = nil
		}
	}
	if len(cells) == 0 && !p.done {
		out = append(out, line{{"waiting for the first interval…", th.dim}})
	}
	if p.summary != nil {
		out = append(out, line{{loadSummaryText(p.run, p.summary, nil), th.strong}})
		if len(p.moved) > 0 {
			parts := make([]string, len(p.moved))
			for i, m := range p.moved {
				parts[i] = fmt.Sprintf("%s tx %sB rx %sB", m.Name, units.Short(float64(m.TxBytes)), units.Short(float64(m.RxBytes)))
			}
			for _, text := range wrap("slaves' counters meanwhile (all traffic): "+strings.Join(parts, ", "), width, "  ") {
				out = append(out, line{{text, th.base}})
			}
		}
	} else if len(cells) > 1 {
		sum := line{{"sum ", th.dim}}
		if p.sent.Bytes > 0 {
			sum = sum.add("tx "+units.Bits(p.sent.BitsPerSecond)+"  ", th.strong)
		}
		if p.received.Bytes > 0 {
			sum = sum.add("rx "+units.Bits(p.received.BitsPerSecond), th.strong)
		}
		out = append(out, sum)
	}
	return out
}

// prevWidth is the width of the last cell of row, for padding cells to
// columns.
func prevWidth(row line, cellW int) int {
	return row.width() % cellW
}

// loadErrWords says what a failed test means for the admin.
func loadErrWords(err error) string {
	var se *load.ServerError
	switch {
	case errors.Is(err, load.ErrBusy):
		return "busy: the server runs another test (one at a time); try again when it ends"
	case errors.As(err, &se):
		return "the server refused the test: " + err.Error()
	case errors.Is(err, load.ErrStopped):
		return "stopped before the streams ran"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused: nothing listens on that port (start iperf3 -s or bondtop serve there): " + err.Error()
	case strings.Contains(err.Error(), "no route") || strings.Contains(err.Error(), "unreachable") || strings.Contains(err.Error(), "i/o timeout"):
		return "unreachable: " + err.Error()
	}
	return err.Error()
}

// dockRect is where the running test goes: the bottom panels' place,
// under the graphs, so both are in sight. ok is false when the screen has
// no room for both.
func (d *dashboard) dockRect() (rect, bool) {
	v := d.visible
	if !v.rx.visible() || !(v.side.visible() || v.events.visible()) {
		return rect{}, false
	}
	top := v.rx.y + v.rx.h
	bottom := max(v.side.y+v.side.h, v.events.y+v.events.h)
	if bottom-top < 4 {
		return rect{}, false
	}
	return rect{0, top, v.rx.w + v.tx.w, bottom - top}, true
}

// LoadRunner starts the load panel's tests. Start may wait on the network
// (DNS, the route lookup, a neighbour nudge), so the panel calls it off
// the event loop, and never touches a widget from it.
type LoadRunner interface {
	Start(ctx context.Context, b *model.BondSample, req loadrun.Request) (*loadrun.Run, error)
}

// targetProposer is a LoadRunner that knows where a test of the bond
// should go before the admin types it (the demo's simulated peer).
type targetProposer interface {
	ProposeTarget(b *model.BondSample) string
}
