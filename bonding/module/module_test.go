package module

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

// eeprom is a module's memory as test vectors: key (i2c address, page),
// value the 256 bytes of that address (page 0) or the page's upper half
// at [128:256].
type eeprom map[[2]uint8][]byte

// read serves Requests from the vectors and records what was asked.
func (e eeprom) read(asked *[]Request) ReadFunc {
	return func(r Request) ([]byte, error) {
		*asked = append(*asked, r)
		b, ok := e[[2]uint8{r.I2CAddress, r.Page}]
		if !ok {
			return nil, errors.New("no such page")
		}
		return b[r.Offset : r.Offset+r.Length], nil
	}
}

func mem() []byte { return make([]byte, 256) }

func put16(b []byte, off int, v uint16) { binary.BigEndian.PutUint16(b[off:], v) }
func putText(b []byte, off, n int, s string) {
	for i := range n {
		b[off+i] = ' '
	}
	copy(b[off:], s)
}

func near(t *testing.T, what string, got *float64, want float64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s absent, want %v", what, want)
		return
	}
	if math.Abs(*got-want) > 1e-3*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %v, want %v", what, *got, want)
	}
}

// sfpVectors builds an SFP+ per SFF-8472: A0h identifier 03h at 0,
// vendor at 20, part number at 40, revision at 56, serial at 68, byte 92
// = 0x68 (DDM implemented, internally calibrated, average rx power);
// A2h values at 96 (temperature 0x1A80 = 26.5 °C, Vcc 33000 = 3.3 V, bias
// 3000 × 2 µA = 6 mA, tx power 5012 × 0.1 µW = 0.5012 mW = -3.0 dBm, rx
// power 380 = 0.038 mW = -14.2 dBm) and thresholds at 0 (temperature
// 75/-5/70/0 °C; Vcc at 8; bias at 16; tx power at 24; rx power at 32:
// high alarm 1.0 mW, low alarm 0.0251 mW = -16.0 dBm, high warning 0.7943
// mW, low warning 0.0631 mW = -12.0 dBm).
func sfpVectors() eeprom {
	a0, a2 := mem(), mem()
	a0[0] = 0x03
	putText(a0, 20, 16, "ACME OPTICS")
	putText(a0, 40, 16, "SFP-10G-SR")
	putText(a0, 56, 4, "A")
	putText(a0, 68, 16, "SN12345")
	a0[92] = 0x68
	for i, v := range []int16{75 * 256, -5 * 256, 70 * 256, 0} {
		put16(a2, 2*i, uint16(v))
	}
	for i, v := range []uint16{36000, 30000, 34650, 31350} {
		put16(a2, 8+2*i, v)
	}
	for i, v := range []uint16{6000, 1000, 5000, 1500} {
		put16(a2, 16+2*i, v)
	}
	for i, v := range []uint16{10000, 1000, 7943, 1585} {
		put16(a2, 24+2*i, v)
	}
	for i, v := range []uint16{10000, 251, 7943, 631} {
		put16(a2, 32+2*i, v)
	}
	put16(a2, 96, 0x1A80)
	put16(a2, 98, 33000)
	put16(a2, 100, 3000)
	put16(a2, 102, 5012)
	put16(a2, 104, 380)
	return eeprom{{AddrA0, 0}: a0, {AddrA2, 0}: a2}
}

func TestDecodeSFP(t *testing.T) {
	var asked []Request
	m, err := Decode(sfpVectors().read(&asked))
	if err != nil {
		t.Fatal(err)
	}
	if m.Type != "SFP" || m.Vendor != "ACME OPTICS" || m.PartNumber != "SFP-10G-SR" || m.Revision != "A" || m.Serial != "SN12345" {
		t.Errorf("identity = %q %q %q %q %q", m.Type, m.Vendor, m.PartNumber, m.Revision, m.Serial)
	}
	near(t, "temperature", m.TemperatureC, 26.5)
	near(t, "vcc", m.SupplyVoltageV, 3.3)
	if len(m.Lanes) != 1 {
		t.Fatalf("lanes = %d, want 1", len(m.Lanes))
	}
	l := m.Lanes[0]
	near(t, "bias", l.TxBiasMA, 6)
	near(t, "tx mW", l.TxPowerMW, 0.5012)
	near(t, "tx dBm", l.TxPowerDBm, -3.0)
	near(t, "rx mW", l.RxPowerMW, 0.038)
	near(t, "rx dBm", l.RxPowerDBm, -14.2)
	if m.RxPowerType != "average" {
		t.Errorf("rx power type %q", m.RxPowerType)
	}
	th := m.Thresholds
	if th == nil || th.RxPowerMW == nil || th.TemperatureC == nil || th.SupplyVoltageV == nil || th.TxBiasMA == nil || th.TxPowerMW == nil {
		t.Fatalf("thresholds incomplete: %+v", th)
	}
	near(t, "rx low warning", &th.RxPowerMW.LowWarning, 0.0631)
	near(t, "rx low alarm", &th.RxPowerMW.LowAlarm, 0.0251)
	near(t, "temp low alarm", &th.TemperatureC.LowAlarm, -5)
	near(t, "vcc high alarm", &th.SupplyVoltageV.HighAlarm, 3.6)
	near(t, "bias high warning", &th.TxBiasMA.HighWarning, 10)
	// A0h's lower half (all SFF-8472 decodes of it), A2h's lower half:
	// nothing else.
	if len(asked) != 2 || asked[1].I2CAddress != AddrA2 || asked[1].Offset != 0 {
		t.Errorf("reads = %+v", asked)
	}
}

// An SFP without diagnostics (byte 92 bit 6 clear, as copper DACs): the
// identity only, A2h never read, every monitor absent.
func TestDecodeSFPWithoutDiagnostics(t *testing.T) {
	v := sfpVectors()
	v[[2]uint8{AddrA0, 0}][92] = 0
	var asked []Request
	m, err := Decode(v.read(&asked))
	if err != nil {
		t.Fatal(err)
	}
	if m.TemperatureC != nil || m.SupplyVoltageV != nil || m.Lanes != nil || m.Thresholds != nil || m.RxPowerType != "" {
		t.Errorf("monitors present without DDM: %+v", m)
	}
	if m.Vendor != "ACME OPTICS" {
		t.Errorf("vendor %q", m.Vendor)
	}
	for _, r := range asked {
		if r.I2CAddress == AddrA2 {
			t.Errorf("A2h read without DDM: %+v", r)
		}
	}
	b, _ := json.Marshal(m)
	for _, k := range []string{"temperature_c", "lanes", "thresholds"} {
		if strings.Contains(string(b), `"`+k+`"`) {
			t.Errorf("JSON has %s: %s", k, b)
		}
	}
}

// External calibration (byte 92 bit 4), SFF-8472 9.3: A2h 56-75 hold the
// rx power polynomial's IEEE-754 coefficients Rx_PWR(4) .. Rx_PWR(0), then
// slope (8.8 unsigned) and offset (signed) for bias at 76, tx power at
// 80, temperature at 84, Vcc at 88.
func TestDecodeSFPExternalCalibration(t *testing.T) {
	v := sfpVectors()
	a0, a2 := v[[2]uint8{AddrA0, 0}], v[[2]uint8{AddrA2, 0}]
	a0[92] = 0x58 // DDM, externally calibrated, average
	for i, c := range []float32{0, 0, 0, 2, 10} {
		binary.BigEndian.PutUint32(a2[56+4*i:], math.Float32bits(c))
	}
	put16(a2, 76, 0x0200) // bias slope 2.0
	put16(a2, 78, 100)    // bias offset +100 (×2 µA)
	put16(a2, 80, 0x0100) // tx power slope 1.0
	put16(a2, 82, 0xFFF6) // offset -10 (×0.1 µW)
	put16(a2, 84, 0x0080) // temperature slope 0.5
	put16(a2, 86, 0)
	put16(a2, 88, 0x0100) // Vcc slope 1.0
	put16(a2, 90, 0)
	var asked []Request
	m, err := Decode(v.read(&asked))
	if err != nil {
		t.Fatal(err)
	}
	near(t, "bias", m.Lanes[0].TxBiasMA, (2*3000+100)*0.002)
	near(t, "tx mW", m.Lanes[0].TxPowerMW, (5012-10)/10000.0)
	near(t, "rx mW", m.Lanes[0].RxPowerMW, (2*380+10)/10000.0)
	near(t, "temperature", m.TemperatureC, 26.5/2)
	near(t, "vcc", m.SupplyVoltageV, 3.3)
	near(t, "rx low warning", &m.Thresholds.RxPowerMW.LowWarning, (2*631+10)/10000.0)
}

// qsfpVectors builds a QSFP28 per SFF-8636: lower page identifier 11h,
// status byte 2 = 0 (paged), temperature at 22 = 0x2300 (35 °C), Vcc at 26
// = 32900, rx power lanes at 34 (lane 3: 0 mW, no light), bias at 42, tx
// power at 50; upper page 00h: technology 147 = 0x00 (850 nm VCSEL),
// vendor 148, part number 168, revision 184, serial 196, diag type 220 =
// 0x3C (temperature, Vcc, average rx, tx power); page 03h thresholds:
// temperature 128, Vcc 144, rx power 176, bias 184, tx power 192.
func qsfpVectors() eeprom {
	lo, p0, p3 := mem(), mem(), mem()
	lo[0] = 0x11
	put16(lo, 22, 0x2300)
	put16(lo, 26, 32900)
	for i, v := range []uint16{7943, 6310, 0, 5012} {
		put16(lo, 34+2*i, v)
	}
	for i, v := range []uint16{3500, 3600, 3700, 3800} {
		put16(lo, 42+2*i, v)
	}
	for i, v := range []uint16{8000, 8100, 8200, 8300} {
		put16(lo, 50+2*i, v)
	}
	p0[128] = 0x11
	putText(p0, 148, 16, "FINISAR CORP")
	putText(p0, 168, 16, "FTLC9551REPM")
	putText(p0, 184, 2, "A0")
	putText(p0, 196, 16, "X9ABCDE")
	p0[220] = 0x3C
	for i, v := range []int16{80 * 256, -10 * 256, 75 * 256, -5 * 256} {
		put16(p3, 128+2*i, uint16(v))
	}
	for i, v := range []uint16{36300, 29700, 34650, 31350} {
		put16(p3, 144+2*i, v)
	}
	for i, v := range []uint16{34673, 407, 17378, 1023} {
		put16(p3, 176+2*i, v)
	}
	for i, v := range []uint16{7500, 1000, 7000, 1500} {
		put16(p3, 184+2*i, v)
	}
	for i, v := range []uint16{34673, 1023, 17378, 2512} {
		put16(p3, 192+2*i, v)
	}
	copy(p0, lo[:128]) // page 0 at address 0x50: lower half + upper 00h
	return eeprom{{AddrA0, 0}: p0, {AddrA0, 3}: p3}
}

func TestDecodeQSFP28(t *testing.T) {
	var asked []Request
	m, err := Decode(qsfpVectors().read(&asked))
	if err != nil {
		t.Fatal(err)
	}
	if m.Type != "QSFP28" || m.Vendor != "FINISAR CORP" || m.PartNumber != "FTLC9551REPM" || m.Revision != "A0" || m.Serial != "X9ABCDE" {
		t.Errorf("identity = %+v", m)
	}
	near(t, "temperature", m.TemperatureC, 35)
	near(t, "vcc", m.SupplyVoltageV, 3.29)
	if len(m.Lanes) != 4 {
		t.Fatalf("lanes = %d", len(m.Lanes))
	}
	near(t, "lane 1 rx dBm", m.Lanes[0].RxPowerDBm, -1.0)
	near(t, "lane 2 rx dBm", m.Lanes[1].RxPowerDBm, -2.0)
	near(t, "lane 3 rx mW", m.Lanes[2].RxPowerMW, 0)
	if m.Lanes[2].RxPowerDBm != nil {
		t.Errorf("lane 3 dBm of no light = %v, want absent", *m.Lanes[2].RxPowerDBm)
	}
	near(t, "lane 4 bias", m.Lanes[3].TxBiasMA, 7.6)
	near(t, "lane 4 tx mW", m.Lanes[3].TxPowerMW, 0.83)
	th := m.Thresholds
	if th == nil || th.RxPowerMW == nil || th.TxPowerMW == nil {
		t.Fatalf("thresholds %+v", th)
	}
	near(t, "rx low alarm", &th.RxPowerMW.LowAlarm, 0.0407)
	near(t, "rx low warning", &th.RxPowerMW.LowWarning, 0.1023)
	near(t, "temp low alarm", &th.TemperatureC.LowAlarm, -10)
	near(t, "bias high alarm", &th.TxBiasMA.HighAlarm, 15)
	if last := asked[len(asked)-1]; last.Page != 3 || last.Offset != 128 {
		t.Errorf("last read %+v, want page 3 upper half", last)
	}
}

// Flat memory (status bit 2) has no page 03h: no thresholds, no read of it.
// A copper cable (technology >= 1010b) has no optical lanes.
func TestDecodeQSFPFlatAndCopper(t *testing.T) {
	v := qsfpVectors()
	p0 := v[[2]uint8{AddrA0, 0}]
	p0[2] = 0x04
	p0[147] = 0xA0
	var asked []Request
	m, err := Decode(v.read(&asked))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range asked {
		if r.Page == 3 {
			t.Errorf("page 3 read on flat memory")
		}
	}
	if m.Thresholds != nil || m.Lanes != nil {
		t.Errorf("flat copper module: thresholds %+v lanes %+v", m.Thresholds, m.Lanes)
	}
	near(t, "temperature", m.TemperatureC, 35)
}

// cmisVectors builds a QSFP-DD per CMIS 5: lower page identifier 18h,
// byte 2 = 0 (paged), temperature at 14 = 0x2A00 (42 °C), Vcc at 16 =
// 33100; upper page 00h vendor at 129, part number 148, revision 164,
// serial 166; page 01h 159 = 0x03, 160 = 0x0F (every monitor, bias x2);
// page 02h thresholds (rx power at 192: low warning 0.0631 mW); page 11h
// lanes 1-8: tx power at 154, bias at 170, rx power at 186.
func cmisVectors() eeprom {
	p0, p1, p2, p11 := mem(), mem(), mem(), mem()
	p0[0] = 0x18
	put16(p0, 14, 0x2A00)
	put16(p0, 16, 33100)
	putText(p0, 129, 16, "ARISTA")
	putText(p0, 148, 16, "QDD-400G-DR4")
	putText(p0, 164, 2, "01")
	putText(p0, 166, 16, "XKT0001")
	p1[159], p1[160] = 0x03, 0x0F
	put16(p2, 128, 75*256)
	for i, v := range []uint16{20000, 500, 15849, 631} {
		put16(p2, 192+2*i, v)
	}
	for i := range 8 {
		put16(p11, 154+2*i, uint16(10000+i))
		put16(p11, 170+2*i, 4000)
		put16(p11, 186+2*i, uint16(1000*(i+1)))
	}
	return eeprom{{AddrA0, 0}: p0, {AddrA0, 1}: p1, {AddrA0, 2}: p2, {AddrA0, 0x11}: p11}
}

func TestDecodeCMIS(t *testing.T) {
	var asked []Request
	m, err := Decode(cmisVectors().read(&asked))
	if err != nil {
		t.Fatal(err)
	}
	if m.Type != "QSFP-DD" || m.Vendor != "ARISTA" || m.PartNumber != "QDD-400G-DR4" || m.Serial != "XKT0001" || m.Revision != "01" {
		t.Errorf("identity %+v", m)
	}
	near(t, "temperature", m.TemperatureC, 42)
	near(t, "vcc", m.SupplyVoltageV, 3.31)
	if len(m.Lanes) != 8 {
		t.Fatalf("lanes %d", len(m.Lanes))
	}
	near(t, "lane 8 rx", m.Lanes[7].RxPowerMW, 0.8)
	near(t, "lane 1 bias x2", m.Lanes[0].TxBiasMA, 16)
	near(t, "lane 1 tx dBm", m.Lanes[0].TxPowerDBm, 0)
	near(t, "rx low warning", &m.Thresholds.RxPowerMW.LowWarning, 0.0631)
	if m.Thresholds.TemperatureC == nil || m.Thresholds.TemperatureC.HighAlarm != 75 {
		t.Errorf("temperature limits %+v", m.Thresholds.TemperatureC)
	}
	// A module that says it monitors no rx power has none.
	v := cmisVectors()
	v[[2]uint8{AddrA0, 1}][160] = 0x03
	m, _ = Decode(v.read(&asked))
	if m.Lanes[0].RxPowerMW != nil || m.Thresholds.RxPowerMW != nil {
		t.Errorf("rx power reported though not monitored")
	}
}

func TestDecodeErrorsAndUnknown(t *testing.T) {
	want := errors.New("operation not supported")
	if _, err := Decode(func(Request) ([]byte, error) { return nil, want }); !errors.Is(err, want) {
		t.Errorf("lower page error = %v", err)
	}
	if _, err := Decode(func(r Request) ([]byte, error) { return make([]byte, 3), nil }); !errors.Is(err, ErrShort) {
		t.Errorf("short read error = %v", err)
	}
	m, err := Decode(func(r Request) ([]byte, error) {
		b := make([]byte, r.Length)
		b[0] = 0x42
		return b, nil
	})
	if err != nil || m.Type != "unknown (0x42)" || m.Lanes != nil || m.TemperatureC != nil {
		t.Errorf("unknown identifier: %+v %v", m, err)
	}
}

func TestDBm(t *testing.T) {
	for _, c := range []struct {
		mw   float64
		dbm  float64
		isOK bool
	}{{1, 0, true}, {0.1, -10, true}, {0.038, -14.2, true}, {0, 0, false}, {-1, 0, false}} {
		got, ok := DBm(c.mw)
		if ok != c.isOK || (ok && math.Abs(got-c.dbm) > 0.01) {
			t.Errorf("DBm(%v) = %v %v, want %v %v", c.mw, got, ok, c.dbm, c.isOK)
		}
	}
}

// FuzzDecode serves every page from the fuzzer's bytes: whatever a module
// (or a broken driver) returns, Decode does not panic and its result
// encodes as JSON (no NaN or infinity).
func FuzzDecode(f *testing.F) {
	for _, v := range []eeprom{sfpVectors(), qsfpVectors(), cmisVectors()} {
		var seed []byte
		for _, k := range [][2]uint8{{AddrA0, 0}, {AddrA2, 0}, {AddrA0, 3}} {
			if b, ok := v[k]; ok {
				seed = append(seed, b...)
			} else {
				seed = append(seed, mem()...)
			}
		}
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		read := func(r Request) ([]byte, error) {
			start := (int(r.I2CAddress-AddrA0)*7+int(r.Page))*37 + r.Offset
			if len(data) == 0 {
				return nil, errors.New("empty")
			}
			out := make([]byte, r.Length)
			for i := range out {
				out[i] = data[(start+i)%len(data)]
			}
			return out, nil
		}
		m, err := Decode(read)
		if err != nil {
			return
		}
		if _, err := json.Marshal(m); err != nil {
			t.Fatalf("JSON: %v (%+v)", err, m)
		}
	})
}
