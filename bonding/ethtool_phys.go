package bonding

// LinkState is the ethtool link state of an interface
// (ETHTOOL_MSG_LINKSTATE_GET): what `ethtool DEV` prints as "Link
// detected", and, where the driver says, why the link is down.
type LinkState struct {
	// Detected is nil when the driver does not report the link (no
	// get_link): `ethtool DEV` then prints no "Link detected" line.
	Detected *bool `json:"detected"`
	// ExtState and ExtSubstate are the driver's reason for a down link
	// (Linux 5.9+, a few drivers: mlx5, ice, bnxt...), e.g. "no_cable",
	// "autoneg" / "no_partner_detected"; empty when it gives none.
	ExtState    string `json:"ext_state,omitempty"`
	ExtSubstate string `json:"ext_substate,omitempty"`
	// DownEvents is the driver's own count of link-down events (6.7+).
	DownEvents *uint32 `json:"down_events,omitempty"`
}

// FEC is an interface's forward error correction (ETHTOOL_MSG_FEC_GET
// with statistics): what `ethtool --show-fec DEV` and `ethtool -I
// --show-fec DEV` print.
type FEC struct {
	// Configured lists the encodings configured or supported (drivers
	// differ; ethtool prints "Configured FEC encodings"): "Auto", "Off",
	// "RS", "BaseR", "LLRS".
	Configured []string `json:"configured"`
	// Active is the encoding in use; empty when the link is down or the
	// driver does not say.
	Active string `json:"active,omitempty"`
	// Corrected counts blocks FEC repaired, Uncorrectable the blocks it
	// could not (frames lost), CorrectedBits the bits repaired; nil when
	// the driver keeps no such counter.
	Corrected     *uint64 `json:"corrected_blocks,omitempty"`
	Uncorrectable *uint64 `json:"uncorrectable_blocks,omitempty"`
	CorrectedBits *uint64 `json:"corrected_bits,omitempty"`
}

// linkExtStates names enum ethtool_link_ext_state (uapi ethtool.h).
var linkExtStates = []string{"autoneg", "link_training_failure", "link_logical_mismatch",
	"bad_signal_integrity", "no_cable", "cable_issue", "eeprom_issue", "calibration_failure",
	"power_budget_exceeded", "overheat", "module"}

// linkExtSubstates names the substates of each state that has them
// (enum ethtool_link_ext_substate_*; substate 0 is unset).
var linkExtSubstates = map[string][]string{
	"autoneg": {"", "no_partner_detected", "ack_not_received", "next_page_exchange_failed",
		"no_partner_detected_force_mode", "fec_mismatch_during_override", "no_hcd"},
	"link_training_failure": {"", "kr_frame_lock_not_acquired", "kr_link_inhibit_timeout",
		"kr_link_partner_did_not_set_receiver_ready", "remote_fault"},
	"link_logical_mismatch": {"", "pcs_did_not_acquire_block_lock", "pcs_did_not_acquire_am_lock",
		"pcs_did_not_get_align_status", "fc_fec_is_not_locked", "rs_fec_is_not_locked"},
	"bad_signal_integrity": {"", "large_number_of_physical_errors", "unsupported_rate",
		"serdes_reference_clock_lost", "serdes_alos"},
	"cable_issue": {"", "unsupported_cable", "cable_test_failure"},
	"module":      {"", "cmis_not_ready"},
}

// Link mode bits of the FEC encodings (enum ethtool_link_mode_bit_indices)
// and the names `ethtool --show-fec` gives them.
var fecModeBits = []struct {
	bit  uint32
	name string
}{{49, "Off"}, {50, "RS"}, {51, "BaseR"}, {74, "LLRS"}}

func fecModeName(bit uint32) string {
	for _, m := range fecModeBits {
		if m.bit == bit {
			return m.name
		}
	}
	return ""
}
