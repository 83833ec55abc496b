package module

import (
	"encoding/binary"
	"math"
)

// SFF-8472 (SFP, SFP+, SFP28), address A0h: 0 identifier, 20-35 vendor
// name, 40-55 part number, 56-59 revision, 68-83 serial, 92 diagnostic
// monitoring type. Address A2h: 0-39 thresholds (temperature, Vcc, bias,
// tx power, rx power; each high alarm, low alarm, high warning, low
// warning, 2 bytes), 56-91 external calibration constants, 96-105 the
// live values (temperature, Vcc, bias, tx power, rx power).
const (
	sffVendor      = 20
	sffPartNumber  = 40
	sffRevision    = 56
	sffSerial      = 68
	sffDiagType    = 92
	sffA0Len       = 96 // the bytes Decode needs of A0h
	sffA2Len       = 106
	sffThresholds  = 0
	sffCalibration = 56
	sffValues      = 96

	sffDDMImplemented = 1 << 6
	sffExternalCal    = 1 << 4
	sffRxPowerAverage = 1 << 3
)

// DecodeSFF8472 decodes an SFP's A0h bytes (at least 96) and, when the
// module implements diagnostics, its A2h bytes (at least 106; nil when
// not read). Externally calibrated modules have their raw values (and
// thresholds) converted with the constants A2h holds.
func DecodeSFF8472(a0, a2 []byte) *Module {
	if len(a0) == 0 {
		return nil
	}
	m := &Module{Identifier: a0[0], Type: TypeName(a0[0])}
	if len(a0) < sffA0Len {
		return m
	}
	m.Vendor = text(a0[sffVendor : sffVendor+16])
	m.PartNumber = text(a0[sffPartNumber : sffPartNumber+16])
	m.Revision = text(a0[sffRevision : sffRevision+4])
	m.Serial = text(a0[sffSerial : sffSerial+16])
	diag := a0[sffDiagType]
	if diag&sffDDMImplemented == 0 || len(a2) < sffA2Len {
		return m
	}
	m.RxPowerType = "oma"
	if diag&sffRxPowerAverage != 0 {
		m.RxPowerType = "average"
	}
	cal := internalCal
	if diag&sffExternalCal != 0 {
		cal = externalCal(a2)
	}
	v := sffValues
	m.TemperatureC = ptr(cal.temp(a2, v))
	m.SupplyVoltageV = ptr(cal.volts(a2, v+2))
	lane := Lane{Lane: 1, TxBiasMA: ptr(cal.bias(a2, v+4))}
	setPower(&lane.TxPowerMW, &lane.TxPowerDBm, cal.txPower(a2, v+6))
	setPower(&lane.RxPowerMW, &lane.RxPowerDBm, cal.rxPower(a2, v+8))
	m.Lanes = []Lane{lane}
	t := sffThresholds
	m.Thresholds = nonEmpty(&Thresholds{
		TemperatureC:   limits(a2, t, cal.temp),
		SupplyVoltageV: limits(a2, t+8, cal.volts),
		TxBiasMA:       limits(a2, t+16, cal.bias),
		TxPowerMW:      limits(a2, t+24, cal.txPower),
		RxPowerMW:      limits(a2, t+32, cal.rxPower),
	})
	return m
}

// calibration turns A2h's raw words into units.
type calibration struct {
	temp, volts, bias, txPower, rxPower func(b []byte, off int) float64
}

var internalCal = calibration{temp: convTemp, volts: convVolts, bias: convBias, txPower: convPower, rxPower: convPower}

// externalCal reads SFF-8472 9.3's constants: receive power is a
// polynomial of degree 4 with IEEE-754 coefficients (Rx_PWR(4) first);
// the others are slope (unsigned 8.8 fixed point) times the raw value
// plus a signed offset, in the internal units.
func externalCal(a2 []byte) calibration {
	c := sffCalibration
	var rx [5]float64 // rx[i] is Rx_PWR(i)
	for i := range rx {
		rx[4-i] = float64(math.Float32frombits(binary.BigEndian.Uint32(a2[c+4*i:])))
	}
	linear := func(at int, signedRaw bool, unit func(float64) float64) func(b []byte, off int) float64 {
		slope := float64(u16(a2, at)) / 256
		offset := float64(s16(a2, at+2))
		return func(b []byte, off int) float64 {
			raw := float64(u16(b, off))
			if signedRaw {
				raw = float64(s16(b, off))
			}
			return unit(slope*raw + offset)
		}
	}
	return calibration{
		bias:    linear(c+20, false, func(x float64) float64 { return x * 0.002 }),
		txPower: linear(c+24, false, func(x float64) float64 { return x / 10000 }),
		temp:    linear(c+28, true, func(x float64) float64 { return x / 256 }),
		volts:   linear(c+32, false, func(x float64) float64 { return x / 10000 }),
		rxPower: func(b []byte, off int) float64 {
			x := float64(u16(b, off))
			p := (((rx[4]*x+rx[3])*x+rx[2])*x+rx[1])*x + rx[0]
			if math.IsNaN(p) || math.IsInf(p, 0) || p < 0 {
				p = 0
			}
			return p / 10000
		},
	}
}
