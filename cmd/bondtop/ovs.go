package main

import (
	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/internal/printable"
)

// listMode is the MODE column of `bondtop list`: the kernel's mode word
// for a Linux bond, "ovs balance-tcp (br-ex)" for an Open vSwitch bond, so
// both kinds read apart in one table.
func listMode(b *bonding.Bond) string {
	if !b.IsOVS() {
		return dash(b.Mode)
	}
	s := "ovs " + dash(b.Mode)
	if b.Bridge != nil {
		s += " (" + printable.String(*b.Bridge) + ")"
	}
	return s
}
