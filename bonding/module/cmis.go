package module

// CMIS 4.0/5.x (QSFP-DD, OSFP, QSFP+ with CMIS). Lower page: 0
// identifier, 2 bit 7 flat memory, 14-15 temperature, 16-17 Vcc. Upper
// page 00h: 129-144 vendor name, 148-163 part number, 164-165 revision,
// 166-181 serial. Page 01h byte 159: bit 0 temperature, bit 1 Vcc
// monitored; byte 160: bit 0 tx bias, bit 1 tx power, bit 2 rx power
// monitored, bits 4-3 the tx bias multiplier (1, 2, 4). Page 02h
// thresholds (high alarm, low alarm, high warning, low warning):
// temperature 128, Vcc 136, tx power 176, tx bias 184, rx power 192.
// Page 11h (bank 0): tx power of lanes 1-8 at 154, tx bias at 170, rx
// power at 186.
const (
	cmisFlatMem    = 1 << 7
	cmisTemp       = 14
	cmisVcc        = 16
	cmisVendor     = 129
	cmisPartNumber = 148
	cmisRevision   = 164
	cmisSerial     = 166
	cmisMonitors1  = 159
	cmisMonitors2  = 160
	cmisTxPower    = 154
	cmisTxBias     = 170
	cmisRxPower    = 186
)

// cmisLanes is how many lanes page 11h carries for the form factor.
func cmisLanes(id uint8) int {
	if id == idQSFPCMI {
		return qsfpLanes
	}
	return 8
}

// DecodeCMIS decodes a CMIS module's lower page and upper pages 00h, 01h
// (which monitors exist; all are assumed when nil), 02h (thresholds) and
// 11h (lane monitors), each 128 bytes or nil when unread.
func DecodeCMIS(lower, upper0, page1, page2, page11 []byte) *Module {
	if len(lower) == 0 {
		return nil
	}
	m := &Module{Identifier: lower[0], Type: TypeName(lower[0])}
	if len(lower) < pageLen {
		return m
	}
	up := func(off int) int { return off - pageLen }
	if len(upper0) >= pageLen {
		m.Vendor = text(upper0[up(cmisVendor) : up(cmisVendor)+16])
		m.PartNumber = text(upper0[up(cmisPartNumber) : up(cmisPartNumber)+16])
		m.Revision = text(upper0[up(cmisRevision) : up(cmisRevision)+2])
		m.Serial = text(upper0[up(cmisSerial) : up(cmisSerial)+16])
	}
	mon1, mon2 := byte(0x03), byte(0x07) // every monitor, bias x1
	if len(page1) >= pageLen {
		mon1, mon2 = page1[up(cmisMonitors1)], page1[up(cmisMonitors2)]
	}
	if mon1&0x01 != 0 {
		m.TemperatureC = ptr(convTemp(lower, cmisTemp))
	}
	if mon1&0x02 != 0 {
		m.SupplyVoltageV = ptr(convVolts(lower, cmisVcc))
	}
	biasScale := float64(int(1) << ((mon2 >> 3) & 0x03))
	if len(page11) >= pageLen && mon2&0x07 != 0 {
		m.RxPowerType = "average"
		for i := range cmisLanes(lower[0]) {
			l := Lane{Lane: i + 1}
			if mon2&0x01 != 0 {
				l.TxBiasMA = ptr(convBias(page11, up(cmisTxBias)+2*i) * biasScale)
			}
			if mon2&0x02 != 0 {
				setPower(&l.TxPowerMW, &l.TxPowerDBm, convPower(page11, up(cmisTxPower)+2*i))
			}
			if mon2&0x04 != 0 {
				setPower(&l.RxPowerMW, &l.RxPowerDBm, convPower(page11, up(cmisRxPower)+2*i))
			}
			m.Lanes = append(m.Lanes, l)
		}
	}
	if len(page2) >= pageLen {
		t := &Thresholds{}
		if mon1&0x01 != 0 {
			t.TemperatureC = limits(page2, up(128), convTemp)
		}
		if mon1&0x02 != 0 {
			t.SupplyVoltageV = limits(page2, up(136), convVolts)
		}
		if mon2&0x02 != 0 {
			t.TxPowerMW = limits(page2, up(176), convPower)
		}
		if mon2&0x01 != 0 {
			scaled := func(b []byte, off int) float64 { return convBias(b, off) * biasScale }
			t.TxBiasMA = limits(page2, up(184), scaled)
		}
		if mon2&0x04 != 0 {
			t.RxPowerMW = limits(page2, up(192), convPower)
		}
		m.Thresholds = nonEmpty(t)
	}
	return m
}
