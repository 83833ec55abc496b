package module

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
)

// Module is what a transceiver's EEPROM says about itself. A value the
// module does not report (no digital diagnostics, a flat-memory module
// without threshold pages, a lane count it does not monitor) is nil or
// absent, never 0.
type Module struct {
	// Type names the form factor from the SFF-8024 identifier byte.
	Type       string `json:"type"`
	Identifier uint8  `json:"identifier"`
	Vendor     string `json:"vendor,omitempty"`
	PartNumber string `json:"part_number,omitempty"`
	Revision   string `json:"revision,omitempty"`
	Serial     string `json:"serial,omitempty"`
	// TemperatureC and SupplyVoltageV are the module's own sensors.
	TemperatureC   *float64 `json:"temperature_c,omitempty"`
	SupplyVoltageV *float64 `json:"supply_voltage_v,omitempty"`
	// Lanes are the optical lanes (1 on an SFP, 4 on a QSFP28, up to 8
	// on CMIS modules), numbered from 1.
	Lanes []Lane `json:"lanes,omitempty"`
	// RxPowerType is "average" or "oma" (optical modulation amplitude):
	// how the module measures receive power.
	RxPowerType string `json:"rx_power_type,omitempty"`
	// Thresholds are the module's own alarm and warning limits; nil when
	// it has none (no diagnostics, or flat memory).
	Thresholds *Thresholds `json:"thresholds,omitempty"`
}

// Lane is one optical lane's monitors.
type Lane struct {
	Lane       int      `json:"lane"`
	TxBiasMA   *float64 `json:"tx_bias_ma,omitempty"`
	TxPowerMW  *float64 `json:"tx_power_mw,omitempty"`
	TxPowerDBm *float64 `json:"tx_power_dbm,omitempty"`
	RxPowerMW  *float64 `json:"rx_power_mw,omitempty"`
	// RxPowerDBm is nil when no light arrives at all (0 mW, -inf dBm):
	// RxPowerMW then says 0.
	RxPowerDBm *float64 `json:"rx_power_dbm,omitempty"`
}

// Thresholds are a module's alarm and warning limits per monitor; a nil
// entry is a monitor the module gives no limits for.
type Thresholds struct {
	TemperatureC   *Limits `json:"temperature_c,omitempty"`
	SupplyVoltageV *Limits `json:"supply_voltage_v,omitempty"`
	TxBiasMA       *Limits `json:"tx_bias_ma,omitempty"`
	TxPowerMW      *Limits `json:"tx_power_mw,omitempty"`
	RxPowerMW      *Limits `json:"rx_power_mw,omitempty"`
}

// Limits are one monitor's four thresholds, in the monitor's unit.
type Limits struct {
	HighAlarm   float64 `json:"high_alarm"`
	LowAlarm    float64 `json:"low_alarm"`
	HighWarning float64 `json:"high_warning"`
	LowWarning  float64 `json:"low_warning"`
}

// Request names a piece of the EEPROM as ethtool's MODULE_EEPROM_GET
// addresses it: offsets 0-127 are the lower page (Page 0 only), offsets
// 128-255 the upper page Page (of Bank, for CMIS). A read never crosses
// the 128-byte boundary.
type Request struct {
	I2CAddress uint8
	Page       uint8
	Bank       uint8
	Offset     int
	Length     int
}

// ReadFunc reads one piece of the EEPROM; it returns exactly r.Length
// bytes or an error.
type ReadFunc func(r Request) ([]byte, error)

// I2C addresses of SFF-8472: A0h (0x50) holds the serial ID, A2h (0x51)
// the diagnostics. QSFP and CMIS modules answer on 0x50 only, with pages.
const (
	AddrA0 = 0x50
	AddrA2 = 0x51
)

// pageLen is half an address space: the lower page or one upper page.
const pageLen = 128

// ErrShort is a read that returned fewer bytes than asked for.
var ErrShort = errors.New("module EEPROM read returned fewer bytes than asked")

// Identifier values of SFF-8024 table 4-1 that bondtop decodes.
const (
	idSFP     = 0x03
	idQSFP    = 0x0C
	idQSFPP   = 0x0D
	idQSFP28  = 0x11
	idQSFPDD  = 0x18
	idOSFP    = 0x19
	idQSFPCMI = 0x1E
)

// TypeName names an SFF-8024 identifier.
func TypeName(id uint8) string {
	switch id {
	case 0x01:
		return "GBIC"
	case 0x02:
		return "soldered module"
	case idSFP:
		return "SFP"
	case idQSFP:
		return "QSFP"
	case idQSFPP:
		return "QSFP+"
	case idQSFP28:
		return "QSFP28"
	case idQSFPDD:
		return "QSFP-DD"
	case idOSFP:
		return "OSFP"
	case idQSFPCMI:
		return "QSFP+ (CMIS)"
	}
	return fmt.Sprintf("unknown (0x%02x)", id)
}

// Decode reads the pages the module's identifier calls for and decodes
// them. An error reading the lower page (no module, a driver without
// module EEPROM access) is returned as is; a page missing beyond it
// leaves its fields absent.
func Decode(read ReadFunc) (*Module, error) {
	lower, err := readPage(read, Request{I2CAddress: AddrA0, Offset: 0, Length: pageLen})
	if err != nil {
		return nil, err
	}
	// An SFP's identity and diagnostics type sit in A0h's first 96
	// bytes; the paged modules keep theirs in upper page 00h. Each page
	// read costs an i2c transfer on many NICs, so only what is decoded is
	// read.
	switch lower[0] {
	case idSFP, 0x02:
		var a2 []byte
		if lower[sffDiagType]&sffDDMImplemented != 0 {
			a2, _ = readPage(read, Request{I2CAddress: AddrA2, Offset: 0, Length: pageLen})
		}
		return DecodeSFF8472(lower, a2), nil
	}
	upper0, _ := readPage(read, Request{I2CAddress: AddrA0, Offset: pageLen, Length: pageLen})
	switch lower[0] {
	case idQSFP, idQSFPP, idQSFP28:
		var page3 []byte
		if lower[2]&sff8636FlatMem == 0 {
			page3, _ = readPage(read, Request{I2CAddress: AddrA0, Page: 3, Offset: pageLen, Length: pageLen})
		}
		return DecodeSFF8636(lower, upper0, page3), nil
	case idQSFPDD, idOSFP, idQSFPCMI:
		var page1, page2, page11 []byte
		if lower[2]&cmisFlatMem == 0 {
			page1, _ = readPage(read, Request{I2CAddress: AddrA0, Page: 0x01, Offset: pageLen, Length: pageLen})
			page2, _ = readPage(read, Request{I2CAddress: AddrA0, Page: 0x02, Offset: pageLen, Length: pageLen})
			page11, _ = readPage(read, Request{I2CAddress: AddrA0, Page: 0x11, Offset: pageLen, Length: pageLen})
		}
		return DecodeCMIS(lower, upper0, page1, page2, page11), nil
	}
	m := &Module{Identifier: lower[0], Type: TypeName(lower[0])}
	return m, nil
}

func readPage(read ReadFunc, r Request) ([]byte, error) {
	b, err := read(r)
	if err != nil {
		return nil, err
	}
	if len(b) < r.Length {
		return nil, ErrShort
	}
	return b[:r.Length], nil
}

// text is an ASCII field of the EEPROM, padded with spaces (or NULs).
func text(b []byte) string {
	return strings.TrimRight(string(b), " \x00")
}

func u16(b []byte, off int) uint16 { return binary.BigEndian.Uint16(b[off:]) }
func s16(b []byte, off int) int16  { return int16(binary.BigEndian.Uint16(b[off:])) }

// Units of SFF-8472 9.2 and SFF-8636 6.2.4, shared by CMIS: temperature
// 1/256 °C (signed), voltage 100 µV, bias 2 µA, optical power 0.1 µW.
func tempC(raw int16) float64   { return float64(raw) / 256 }
func volts(raw uint16) float64  { return float64(raw) / 10000 }
func biasMA(raw uint16) float64 { return float64(raw) * 0.002 }
func powerMW(raw uint16) float64 {
	return float64(raw) / 10000
}

// DBm converts milliwatts to dBm; ok is false for 0 mW or less (-inf).
func DBm(mw float64) (dbm float64, ok bool) {
	if mw <= 0 || math.IsNaN(mw) {
		return 0, false
	}
	return 10 * math.Log10(mw), true
}

func ptr(v float64) *float64 { return &v }

// setPower fills a lane's milliwatts and dBm.
func setPower(mwDst, dbmDst **float64, mw float64) {
	*mwDst = ptr(mw)
	if d, ok := DBm(mw); ok {
		*dbmDst = ptr(d)
	}
}

// limits reads four thresholds stored high alarm, low alarm, high
// warning, low warning, 2 bytes each, from off, through conv.
func limits(b []byte, off int, conv func(b []byte, off int) float64) *Limits {
	l := &Limits{HighAlarm: conv(b, off), LowAlarm: conv(b, off+2), HighWarning: conv(b, off+4), LowWarning: conv(b, off+6)}
	if *l == (Limits{}) {
		return nil // an all-zero block is a module that fills in no limits
	}
	return l
}

func convTemp(b []byte, off int) float64  { return tempC(s16(b, off)) }
func convVolts(b []byte, off int) float64 { return volts(u16(b, off)) }
func convBias(b []byte, off int) float64  { return biasMA(u16(b, off)) }
func convPower(b []byte, off int) float64 { return powerMW(u16(b, off)) }

func nonEmpty(t *Thresholds) *Thresholds {
	if t == nil || *t == (Thresholds{}) {
		return nil
	}
	return t
}
