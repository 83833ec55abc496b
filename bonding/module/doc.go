// Package module decodes a pluggable transceiver's EEPROM (SFP, QSFP,
// QSFP28, QSFP-DD) into what an admin reads off `ethtool -m`: vendor, part
// number and serial, and the digital diagnostics — temperature, supply
// voltage, per-lane transmit bias, transmit and receive power — with the
// module's own alarm and warning thresholds. The layouts are SFF-8472
// (SFP: addresses A0h and A2h), SFF-8636 (QSFP/QSFP+/QSFP28: lower page,
// upper pages 00h and 03h) and CMIS 4/5 (QSFP-DD, OSFP: pages 00h, 02h,
// 11h). Decoding is pure: the caller supplies a function that reads a
// page (over ethtool netlink on a live host, from byte vectors in tests).
package module
