// Package bonding owns what a Linux bond is: the model (Bond, Slave, the
// LACP view of actor and partner, port-state bits), the pure readers that
// turn the kernel's text (/proc/net/bonding, sysfs, /proc/net/dev) into that
// model, and the merge of several readers into one Bond.
//
// The package imports nothing of ours, does no timing and keeps I/O at its
// edges: parsers take bytes, so they can be tested on fixtures and fuzzed.
// A value the kernel did not give stays nil (null in JSON), never zero.
package bonding
