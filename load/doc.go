// Package load owns bondtop's test traffic: a native client and server for
// the iperf3 control protocol (3.x, tested against Debian's 3.12), the data
// streams they move (TCP and UDP, parallel, reverse, bidirectional, paced),
// per-stream live statistics (bytes, bit/s, TCP retransmits and RTT, UDP
// loss and jitter), and the choice of source ports that makes a bond's
// transmit hash put each stream on the slave the admin wants.
//
// It is an engine without a user interface: Start runs a test in its own
// goroutines and hands intervals to the caller on a channel that never
// blocks the engine; Server answers unmodified `iperf3 -c` clients. It
// never runs the iperf3 program.
//
// Safety is part of the contract: a client sends only to the address it
// was given, every test has a duration (DefaultDuration unless set, and
// MaxDuration even when "until stopped"), and stopping a test sends the
// protocol's end messages before the streams close, so the peer reports a
// clean result instead of an error.
package load
