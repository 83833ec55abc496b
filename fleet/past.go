package fleet

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/internal/natural"
	"github.com/bondtop/bondtop/model"
)

// pastPoints is about how many points Past asks for: the graphs of a
// bond's dashboard are at most some hundred columns wide.
const pastPoints = 240

// minPastStep is the finest step Past asks for: a scrape seldom comes
// more often.
const minPastStep = 15 * time.Second

// Past is the bond's rates from..to, from Prometheus' range queries over
// the rate() its refresh shows: the graphs of a bond's dashboard then show
// the past at once (collector.Backfiller). One range query, scoped to
// the bond's target.
func (s *Source) Past(ctx context.Context, bond string, from, to time.Time) ([]time.Time, []model.BondSample, error) {
	s.mu.Lock()
	b := s.byName[bond]
	var instance, job, name string
	if b != nil {
		instance, job, name = b.Instance, b.Job, b.Name
	}
	s.mu.Unlock()
	if b == nil {
		return nil, nil, fmt.Errorf("no bond %q in the fleet", bond)
	}
	c := s.client.Scoped(instance, job)
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	// Prometheus keeps milliseconds: a time finer than that could come
	// back rounded up, past the end asked for.
	from, to = from.Truncate(time.Millisecond), to.Truncate(time.Millisecond)
	step := max(to.Sub(from)/pastPoints, minPastStep).Truncate(time.Second)
	series, err := c.queryRange(ctx, c.queries.Rates, from, to, step)
	if err != nil {
		return nil, nil, c.wrap(ctx, err)
	}
	return pastSamples(bond, name, series)
}

// rangeSeries is one series of a range query's answer.
type rangeSeries struct {
	Labels map[string]string
	Times  []time.Time
	Values []float64
}

// pastSamples turns the tagged rate series of a target into samples of
// the bond called name there (shown as bond): one per time any series
// has, the slaves in natural order as the list has them.
func pastSamples(bond, name string, series []rangeSeries) ([]time.Time, []model.BondSample, error) {
	at := map[time.Time]int{}
	var times []time.Time
	var slaves []string
	for _, r := range series {
		if r.Labels["bond"] != name {
			continue
		}
		if sl := r.Labels["slave"]; sl != "" && !slices.Contains(slaves, sl) {
			slaves = append(slaves, sl)
		}
		for _, t := range r.Times {
			if _, ok := at[t]; !ok {
				at[t] = 0
				times = append(times, t)
			}
		}
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	slices.SortFunc(slaves, natural.Compare)
	samples := make([]model.BondSample, len(times))
	for i, t := range times {
		at[t] = i
		samples[i].Bond = bonding.Bond{Name: bond}
		samples[i].Slaves = make([]model.SlaveSample, len(slaves))
		for j, sl := range slaves {
			samples[i].Slaves[j].Name = sl
		}
	}
	for _, r := range series {
		if r.Labels["bond"] != name {
			continue
		}
		j := slices.Index(slaves, r.Labels["slave"])
		for k, t := range r.Times {
			bps := r.Values[k] * 8
			sm := &samples[at[t]]
			switch r.Labels[tagLabel] {
			case "bond_rx":
				sm.RxBps = &bps
			case "bond_tx":
				sm.TxBps = &bps
			case "slave_rx":
				if j >= 0 {
					sm.Slaves[j].RxBps = &bps
				}
			case "slave_tx":
				if j >= 0 {
					sm.Slaves[j].TxBps = &bps
				}
			}
		}
	}
	return times, samples, nil
}

// queryRange asks Prometheus for q over from..to at step, as query does
// for an instant (the same request path, errors and one-pass decoding).
func (c *Client) queryRange(ctx context.Context, q string, from, to time.Time, step time.Duration) ([]rangeSeries, error) {
	form := url.Values{"query": {q}, "start": {unixSeconds(from)}, "end": {unixSeconds(to)},
		"step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)}}
	var a rangeAnswer
	if err := c.post(ctx, "/api/v1/query_range", form, &a.envelope, &a); err != nil {
		return nil, err
	}
	if a.Data.ResultType != "matrix" {
		return nil, fmt.Errorf("expected a range vector, got %q", a.Data.ResultType)
	}
	out := make([]rangeSeries, 0, len(a.Data.Result))
	for _, r := range a.Data.Result {
		rs := rangeSeries{Labels: r.Metric}
		for _, p := range r.Values {
			if t, v, ok := samplePair(p); ok {
				rs.Times = append(rs.Times, t)
				rs.Values = append(rs.Values, v)
			}
		}
		out = append(out, rs)
	}
	return out, nil
}

// rangeAnswer is Prometheus' answer to a range query.
type rangeAnswer struct {
	envelope
	Data struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			// Values are [seconds, "value"] pairs.
			Values [][2]any `json:"values"`
		} `json:"result"`
	} `json:"data"`
}

func unixSeconds(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixNano())/1e9, 'f', -1, 64)
}
