package demo

import (
	"math"
	"sync"
	"time"

	"github.com/bondtop/bondtop/bonding"
)

// The demo's counters are a function of the wall clock, not of how long
// the demo has run: a demo restarted after a minute continues its
// counters (a Prometheus scraping it sees no reset and no spike), and any
// two demos agree. The script (script in demo.go) runs on the wall clock
// too; the traffic of each second of it is simulated once, here, and the
// counters at a time are whole scripts since the start of the week plus
// the part of the current one.

// demoWeek is how far back the counters count: from the start of the
// current week of Unix time (a host that rebooted then). A week at line
// rate keeps every float64 counter exact to a fraction of a byte.
const demoWeek = 7 * 24 * time.Hour

// demoKernel is the kernel the demo's bonds hash as.
var demoKernel = bonding.KernelVersion{Major: 6, Minor: 12}

// wallTime is t as time since the Unix epoch, the script's clock.
func wallTime(t time.Time) time.Duration { return time.Duration(t.UnixNano()) }

// weekOf returns the index of t's week and the seconds since it began.
func weekOf(t time.Time) (int64, float64) {
	week := t.UnixNano() / int64(demoWeek)
	return week, float64(t.UnixNano()-week*int64(demoWeek)) / 1e9
}

// demoClock holds one script's worth of simulated traffic, per bond and
// second: rows[bond][k] are the counters of each interface (the bond,
// then its slaves) after k seconds of the script, failures and churned
// the slaves' link failure and churn counts then.
type demoClock struct {
	rows     [][][][bonding.NumCounters]float64
	failures [][]map[string]int
	churned  [][]map[string]int
}

// demoCounters is the one table every Source reads.
var demoCounters = sync.OnceValue(newDemoClock)

// newDemoClock simulates one script, a second at a time. Second k's
// traffic follows the state at its end, as a Read at k does.
func newDemoClock() *demoClock {
	period := int(demoScriptPeriod / time.Second)
	bonds := newDemoBonds()
	script(bonds, 0)
	c := &demoClock{}
	for _, sb := range bonds {
		clear(sb.failures)
		clear(sb.churned)
		c.rows = append(c.rows, make([][][bonding.NumCounters]float64, 0, period+1))
		c.failures = append(c.failures, nil)
		c.churned = append(c.churned, nil)
	}
	for k := 0; ; k++ {
		for i, sb := range bonds {
			row := make([][bonding.NumCounters]float64, 0, 1+len(sb.slaves))
			for _, name := range append([]string{sb.name}, sb.slaves...) {
				row = append(row, *sb.counters[name])
			}
			c.rows[i] = append(c.rows[i], row)
			c.failures[i] = append(c.failures[i], copyCounts(sb.failures))
			c.churned[i] = append(c.churned[i], copyCounts(sb.churned))
		}
		if k == period {
			return c
		}
		script(bonds, time.Duration(k+1)*time.Second)
		for _, sb := range bonds {
			b := sb.state()
			sb.advance(&b, demoKernel, 1)
		}
	}
}

func copyCounts(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// position splits t into whole scripts since the week began and the
// second of the current one, with the fraction of the next.
func (c *demoClock) position(t time.Time) (scripts float64, second int, frac float64) {
	_, s := weekOf(t)
	period := demoScriptPeriod.Seconds()
	scripts = math.Floor(s / period)
	in := s - scripts*period
	second = int(math.Floor(in))
	frac = in - float64(second)
	if last := len(c.rows[0]) - 1; second >= last { // rounding at the script's end
		second, frac = last-1, 1
	}
	return scripts, second, frac
}

// at returns the counters of bond i's interfaces (the bond, then its
// slaves) at t.
func (c *demoClock) at(i int, t time.Time) [][bonding.NumCounters]float64 {
	scripts, k, frac := c.position(t)
	rows := c.rows[i]
	whole, this, next := rows[len(rows)-1], rows[k], rows[k+1]
	out := make([][bonding.NumCounters]float64, len(this))
	for j := range out {
		for n := range out[j] {
			out[j][n] = scripts*whole[j][n] + this[j][n] + (next[j][n]-this[j][n])*frac
		}
	}
	return out
}

// resume puts the bonds in the script's state at now, with the link
// failures and churns counted since the week began; a new week starts
// the counters afresh, as a reboot would.
func (d *Source) resume(now time.Time) {
	script(d.bonds, wallTime(now))
	c := demoCounters()
	scripts, k, _ := c.position(now)
	d.week, _ = weekOf(now)
	for i, sb := range d.bonds {
		last := len(c.failures[i]) - 1
		for _, s := range sb.slaves {
			sb.failures[s] = int(scripts)*c.failures[i][last][s] + c.failures[i][k][s]
			sb.churned[s] = int(scripts)*c.churned[i][last][s] + c.churned[i][k][s]
		}
		for name := range sb.published {
			*sb.published[name] = [bonding.NumCounters]uint64{}
			*sb.loadCounters[name] = [bonding.NumCounters]float64{}
		}
	}
}
