package flowmeter

func (o Options) withDefaults() Options {
	if o.MaxFlows <= 0 {
		o.MaxFlows = DefaultMaxFlows
	}
	if o.SampleRate <= 0 {
		o.SampleRate = DefaultSampleRate
	}
	if o.Budget == 0 {
		o.Budget = DefaultBudget
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	return o
}
