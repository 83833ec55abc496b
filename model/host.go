package model

// Host holds host-wide settings a diagnosis needs beside the bonds.
type Host struct {
	// TCPReordering is net.ipv4.tcp_reordering: how many segments out of
	// order TCP tolerates before it takes them for loss. balance-rr
	// reorders; the default 3 makes it retransmit and shrink its window.
	TCPReordering *int `json:"tcp_reordering"`
}
