//go:build !linux

package flowmeter

import "errors"

// Open fails off Linux: the meter needs Linux's TC hooks or AF_PACKET.
func Open(opts Options) (Meter, error) {
	return nil, errors.New("the flow meter needs Linux")
}
