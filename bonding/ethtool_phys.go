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

// FirmwareLLDPAgent reads a driver's private flags (`ethtool
// --show-priv-flags`): i40e's "disable-fw-lldp" off, or ice's
// "fw-lldp-agent" on, is an LLDP agent in the NIC's firmware; known is
// false when the driver has neither flag.
func FirmwareLLDPAgent(flags map[string]bool) (agent, known bool) {
	if off, ok := flags["disable-fw-lldp"]; ok {
		return !off, true
	}
	if on, ok := flags["fw-lldp-agent"]; ok {
		return on, true
	}
	return false, false
}
