package load

// params is the PARAM_EXCHANGE message as the client sends it: only what
// bondtop sets, with iperf3's key names.
type params struct {
	TCP           bool   `json:"tcp,omitempty"`
	UDP           bool   `json:"udp,omitempty"`
	Omit          int    `json:"omit"`
	Time          int    `json:"time"`
	Num           int    `json:"num"`
	BlockCount    int    `json:"blockcount"`
	Parallel      int    `json:"parallel"`
	Reverse       bool   `json:"reverse,omitempty"`
	Bidirectional bool   `json:"bidirectional,omitempty"`
	Len           int    `json:"len,omitempty"`
	Bandwidth     uint64 `json:"bandwidth,omitempty"`
	ClientVersion string `json:"client_version"`
}

// peerParams is PARAM_EXCHANGE as the server reads it: any iperf3 client's
// keys, leniently. Presence alone turns the flags on, as in iperf3.
type peerParams struct {
	TCP           *present `json:"tcp"`
	UDP           *present `json:"udp"`
	SCTP          *present `json:"sctp"`
	Omit          num      `json:"omit"`
	Time          num      `json:"time"`
	Num           num      `json:"num"`
	BlockCount    num      `json:"blockcount"`
	Parallel      num      `json:"parallel"`
	Reverse       *present `json:"reverse"`
	Bidirectional *present `json:"bidirectional"`
	Len           num      `json:"len"`
	Bandwidth     num      `json:"bandwidth"`
	UDP64         *present `json:"udp_counters_64bit"`
	AuthToken     *string  `json:"authtoken"`
	ClientVersion string   `json:"client_version"`
}

// results is EXCHANGE_RESULTS, both ways. Numbers are read leniently;
// iperf3 wants every key present.
type results struct {
	CPUUtilTotal         num            `json:"cpu_util_total"`
	CPUUtilUser          num            `json:"cpu_util_user"`
	CPUUtilSystem        num            `json:"cpu_util_system"`
	SenderHasRetransmits num            `json:"sender_has_retransmits"`
	Streams              []streamResult `json:"streams"`
}

type streamResult struct {
	ID          num `json:"id"`
	Bytes       num `json:"bytes"`
	Retransmits num `json:"retransmits"`
	Jitter      num `json:"jitter"`
	Errors      num `json:"errors"`
	Packets     num `json:"packets"`
	StartTime   num `json:"start_time"`
	EndTime     num `json:"end_time"`
}
