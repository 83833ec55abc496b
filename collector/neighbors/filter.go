package neighbors

import "golang.org/x/net/bpf"

// snapLen is the most of a frame the filter keeps: LLDP and CDP PDUs fit
// in a standard frame; a longer one is cut, and its cut TLV reported.
const snapLen = 1518

// Filter is the classic BPF program a slave's socket runs in the kernel:
// it keeps LLDP (0x88cc), slow-protocol frames (0x8809: LACPDUs and
// markers) and CDP (an 802.3 length, Cisco's multicast address and the
// SNAP header with protocol 0x2000), and drops everything else before it
// is copied to us. No VLAN tag is in the packet a socket sees (the kernel
// moved it to metadata), so the ethertype sits at offset 12.
func Filter() []bpf.Instruction {
	const accept, reject = 12, 13 // instruction indices, checked by tests
	return []bpf.Instruction{
		/* 0 */ bpf.LoadAbsolute{Off: 12, Size: 2},
		/* 1 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: EtherTypeLLDP, SkipTrue: accept - 2},
		/* 2 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: EtherTypeSlow, SkipTrue: accept - 3},
		/* 3 */ bpf.JumpIf{Cond: bpf.JumpGreaterThan, Val: 1500, SkipTrue: reject - 4},
		/* 4 */ bpf.LoadAbsolute{Off: 0, Size: 4},
		/* 5 */ bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: 0x01000ccc, SkipTrue: reject - 6},
		/* 6 */ bpf.LoadAbsolute{Off: 4, Size: 2},
		/* 7 */ bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: 0xcccc, SkipTrue: reject - 8},
		/* 8 */ bpf.LoadAbsolute{Off: 14, Size: 4}, // DSAP, SSAP, control, OUI[0]
		/* 9 */ bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: 0xaaaa0300, SkipTrue: reject - 10},
		/* 10 */ bpf.LoadAbsolute{Off: 18, Size: 4}, // OUI[1:3], protocol id
		/* 11 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0x000c2000, SkipFalse: reject - 12},
		/* 12 */ bpf.RetConstant{Val: snapLen},
		/* 13 */ bpf.RetConstant{Val: 0},
	}
}
