package load

import "time"

// StreamInfo says what a stream is: fixed once it is connected.
type StreamInfo struct {
	// ID is iperf3's stream id (1, 3, 4, 5, ...: 2 is never used).
	ID int `json:"id"`
	// Sender is true when this host sends on the stream.
	Sender bool `json:"sender"`
	// SourcePort is this host's port; PredictedSlave the bond slave the
	// transmit hash is predicted to send it on ("" when unknown).
	SourcePort     uint16 `json:"sport"`
	PredictedSlave string `json:"predicted_slave"`
}

// StreamStats is one stream over one interval (or, in a Summary, the test).
type StreamStats struct {
	StreamInfo
	// Bytes moved by this host on the stream in the interval and its rate.
	Bytes         uint64  `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	// TCP, sending: segments retransmitted in the interval (-1 when the
	// kernel does not say) and the smoothed round-trip time.
	Retransmits int64         `json:"retransmits"`
	RTT         time.Duration `json:"rtt_ns,omitempty"`
	// UDP, receiving: datagrams expected and lost (by sequence gaps), and
	// the jitter (RFC 1889 smoothed transit-time variation).
	Packets uint64        `json:"packets,omitempty"`
	Lost    int64         `json:"lost,omitempty"`
	Jitter  time.Duration `json:"jitter_ns,omitempty"`
}

// Interval is every stream's statistics over one interval.
type Interval struct {
	// Start and End are offsets from the moment the test started running.
	Start, End time.Duration
	Streams    []StreamStats
	// Sent and Received sum the streams this host sends and receives on.
	Sent, Received StreamStats
}

// Summary is a finished test's result, as both ends measured it.
type Summary struct {
	Protocol  Protocol
	Direction Direction
	// Duration is the time the data moved, from TEST_RUNNING to the end.
	Duration time.Duration
	// Stopped is set when the test ended early, by Stop or the context.
	Stopped bool
	Streams []StreamSummary
	// Sent sums the streams this host sends on, Received those it
	// receives on (each with the peer's view folded in, see
	// StreamSummary).
	Sent, Received StreamSummary
}

// StreamSummary is one stream over the whole test.
type StreamSummary struct {
	StreamInfo
	// SentBytes left the sender, ReceivedBytes arrived at the receiver:
	// one count is this host's, the other the peer's results.
	SentBytes     uint64 `json:"sent_bytes"`
	ReceivedBytes uint64 `json:"received_bytes"`
	// BitsPerSecond is ReceivedBytes over the test's duration: what the
	// path delivered.
	BitsPerSecond float64 `json:"bits_per_second"`
	// Retransmits by the sender over the test; -1 when unknown.
	Retransmits int64 `json:"retransmits"`
	// UDP: datagrams sent, lost on the way, and the receiver's jitter.
	Packets uint64        `json:"packets,omitempty"`
	Lost    int64         `json:"lost,omitempty"`
	Jitter  time.Duration `json:"jitter_ns,omitempty"`
}

// Phase is how far a test has come.
type Phase int32

// The phases of a test, in order.
const (
	Connecting Phase = iota // control connection and parameters
	Running                 // streams connected, data moving
	Ending                  // TEST_END sent, results being exchanged
	Done                    // finished, Summary or Err is final
)

func (p Phase) String() string {
	switch p {
	case Connecting:
		return "connecting"
	case Running:
		return "running"
	case Ending:
		return "ending"
	}
	return "done"
}

func bitsPerSecond(bytes uint64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(bytes) * 8 / d.Seconds()
}
