package model

import "testing"

func TestMAC(t *testing.T) {
	if got := MAC([6]byte{0x00, 0x1a, 0xB2, 0x03, 0xff, 0x10}); got != "00:1a:b2:03:ff:10" {
		t.Errorf("MAC: %q, want the kernel's 00:1a:b2:03:ff:10", got)
	}
}
