package module

// SFF-8636 (QSFP, QSFP+, QSFP28). Lower page: 0 identifier, 2 status
// (bit 2 flat memory: no upper pages but 00h), 22-23 temperature, 26-27
// Vcc, 34-41 rx power of lanes 1-4, 42-49 tx bias, 50-57 tx power. Upper
// page 00h: 147 device technology (transmitter type in bits 7-4), 148-163
// vendor name, 168-183 part number, 184-185 revision, 196-211 serial, 220
// diagnostic monitoring type (bit 5 temperature, bit 4 Vcc monitored, bit
// 3 rx power is average rather than OMA, bit 2 tx power monitored). Upper
// page 03h: thresholds, each high alarm, low alarm, high warning, low
// warning: temperature at 128, Vcc 144, rx power 176, tx bias 184, tx
// power 192. Upper-page offsets are the EEPROM's (128-255).
const (
	sff8636FlatMem     = 1 << 2
	sff8636Temp        = 22
	sff8636Vcc         = 26
	sff8636RxPower     = 34
	sff8636TxBias      = 42
	sff8636TxPower     = 50
	sff8636Tech        = 147
	sff8636Vendor      = 148
	sff8636PartNumber  = 168
	sff8636Revision    = 184
	sff8636Serial      = 196
	sff8636DiagType    = 220
	sff8636DiagTemp    = 1 << 5
	sff8636DiagVcc     = 1 << 4
	sff8636DiagRxAvg   = 1 << 3
	sff8636DiagTxPower = 1 << 2
	// Transmitter technologies 1010b and above are copper: no optics to
	// monitor.
	sff8636TechCopper = 0xA
	qsfpLanes         = 4
)

// DecodeSFF8636 decodes a QSFP's lower page (128 bytes), upper page 00h
// (128 bytes, EEPROM offsets 128-255; nil when unread) and upper page 03h
// (the thresholds; nil when unread or flat memory).
func DecodeSFF8636(lower, upper0, page3 []byte) *Module {
	if len(lower) == 0 {
		return nil
	}
	m := &Module{Identifier: lower[0], Type: TypeName(lower[0])}
	if len(lower) < pageLen || len(upper0) < pageLen {
		return m
	}
	up := func(off int) int { return off - pageLen }
	m.Vendor = text(upper0[up(sff8636Vendor) : up(sff8636Vendor)+16])
	m.PartNumber = text(upper0[up(sff8636PartNumber) : up(sff8636PartNumber)+16])
	m.Revision = text(upper0[up(sff8636Revision) : up(sff8636Revision)+2])
	m.Serial = text(upper0[up(sff8636Serial) : up(sff8636Serial)+16])
	diag := upper0[up(sff8636DiagType)]
	if diag&sff8636DiagTemp != 0 {
		m.TemperatureC = ptr(convTemp(lower, sff8636Temp))
	}
	if diag&sff8636DiagVcc != 0 {
		m.SupplyVoltageV = ptr(convVolts(lower, sff8636Vcc))
	}
	if upper0[up(sff8636Tech)]>>4 >= sff8636TechCopper {
		return m // a copper cable: no lasers, no light
	}
	m.RxPowerType = "oma"
	if diag&sff8636DiagRxAvg != 0 {
		m.RxPowerType = "average"
	}
	for i := range qsfpLanes {
		l := Lane{Lane: i + 1, TxBiasMA: ptr(convBias(lower, sff8636TxBias+2*i))}
		setPower(&l.RxPowerMW, &l.RxPowerDBm, convPower(lower, sff8636RxPower+2*i))
		if diag&sff8636DiagTxPower != 0 {
			setPower(&l.TxPowerMW, &l.TxPowerDBm, convPower(lower, sff8636TxPower+2*i))
		}
		m.Lanes = append(m.Lanes, l)
	}
	if len(page3) >= pageLen {
		t := &Thresholds{
			RxPowerMW: limits(page3, up(176), convPower),
			TxBiasMA:  limits(page3, up(184), convBias),
		}
		if diag&sff8636DiagTemp != 0 {
			t.TemperatureC = limits(page3, up(128), convTemp)
		}
		if diag&sff8636DiagVcc != 0 {
			t.SupplyVoltageV = limits(page3, up(144), convVolts)
		}
		if diag&sff8636DiagTxPower != 0 {
			t.TxPowerMW = limits(page3, up(192), convPower)
		}
		m.Thresholds = nonEmpty(t)
	}
	return m
}
