package neighbors

import "strconv"

// mauNames are the operational MAU types of RFC 4836 (dot3MauType), as
// LLDP's MAC/PHY TLV numbers them.
var mauNames = [...]string{
	1: "AUI", 2: "10Base5", 3: "FOIRL", 4: "10Base2", 5: "10BaseT", 6: "10BaseFP",
	7: "10BaseFB", 8: "10BaseFL", 9: "10Broad36", 10: "10BaseTHD", 11: "10BaseTFD",
	12: "10BaseFLHD", 13: "10BaseFLFD", 14: "100BaseT4", 15: "100BaseTXHD",
	16: "100BaseTXFD", 17: "100BaseFXHD", 18: "100BaseFXFD", 19: "100BaseT2HD",
	20: "100BaseT2FD", 21: "1000BaseXHD", 22: "1000BaseXFD", 23: "1000BaseLXHD",
	24: "1000BaseLXFD", 25: "1000BaseSXHD", 26: "1000BaseSXFD", 27: "1000BaseCXHD",
	28: "1000BaseCXFD", 29: "1000BaseTHD", 30: "1000BaseTFD", 31: "10GigBaseX",
	32: "10GigBaseLX4", 33: "10GigBaseR", 34: "10GigBaseER", 35: "10GigBaseLR",
	36: "10GigBaseSR", 37: "10GigBaseW", 38: "10GigBaseEW", 39: "10GigBaseLW",
	40: "10GigBaseSW", 41: "10GigBaseCX4", 42: "2BaseTL", 43: "10PassTS",
	44: "100BaseBX10D", 45: "100BaseBX10U", 46: "100BaseLX10", 47: "1000BaseBX10D",
	48: "1000BaseBX10U", 49: "1000BaseLX10", 50: "1000BasePX10D", 51: "1000BasePX10U",
	52: "1000BasePX20D", 53: "1000BasePX20U", 54: "10GbaseT", 55: "10GbaseLRM",
	56: "1000baseKX", 57: "10GbaseKX4", 58: "10GbaseKR",
}

// MAUName names a MAU type number ("10GbaseT"), or gives the number.
func MAUName(t int) string {
	if t > 0 && t < len(mauNames) && mauNames[t] != "" {
		return mauNames[t]
	}
	return "MAU " + strconv.Itoa(t)
}
