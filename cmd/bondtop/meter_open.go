//go:build flowmeter_open

package main

import "github.com/bondtop/bondtop/collector/flowmeter"

// The in-kernel meter is built on the flowmeter branch; once it is merged,
// drop the build constraint above so live runs open it.
func init() { openMeter = flowmeter.Open }
