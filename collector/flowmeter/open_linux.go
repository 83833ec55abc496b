package flowmeter

import (
	"errors"
	"fmt"
)

// Open starts the best meter this host allows: the eBPF meter, else the
// sampled AF_PACKET one, else an error that says what privileges would add.
// Nothing is attached until Sync.
func Open(opts Options) (Meter, error) {
	opts = opts.withDefaults()
	var ebpfErr error
	if opts.NoEBPF {
		ebpfErr = errors.New("the eBPF meter was turned off")
	} else {
		m, err := openEBPF(opts)
		if err == nil {
			return m, nil
		}
		ebpfErr = err
	}
	s, err := openSampled(opts, ebpfErr.Error())
	if err == nil {
		return s, nil
	}
	return nil, fmt.Errorf("no flow meter: eBPF: %v; sampling: %w. Root (CAP_BPF and CAP_NET_ADMIN) would count every flow on the slaves in the kernel; CAP_NET_RAW alone would sample 1 in %d packets", ebpfErr, err, opts.SampleRate)
}
