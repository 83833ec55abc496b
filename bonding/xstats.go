package bonding

// LACPDUCounters are a slave's 802.3ad PDU counters as the bonding driver
// keeps them (BOND_XSTATS_3AD in the slave's extended link statistics).
type LACPDUCounters struct {
	Rx              uint64 `json:"rx"`
	Tx              uint64 `json:"tx"`
	UnknownRx       uint64 `json:"unknown_rx"`
	IllegalRx       uint64 `json:"illegal_rx"`
	MarkerRx        uint64 `json:"marker_rx"`
	MarkerTx        uint64 `json:"marker_tx"`
	MarkerRespRx    uint64 `json:"marker_resp_rx"`
	MarkerRespTx    uint64 `json:"marker_resp_tx"`
	MarkerUnknownRx uint64 `json:"marker_unknown_rx"`
}

// CarrierCounts count an interface's carrier transitions since it was
// created (IFLA_CARRIER_UP_COUNT, IFLA_CARRIER_DOWN_COUNT; Linux 4.16+),
// every one, also those between two MII polls.
type CarrierCounts struct {
	Up   uint64 `json:"up_count"`
	Down uint64 `json:"down_count"`
}
