// Package natural orders names as a person reads them (bond2 before
// bond10), for every list bondtop shows.
package natural

// Compare orders names as a person reads them: runs of digits by
// their value, so bond2 comes before bond10 and eth9 before eth10.
func Compare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, nb := a[:da], b[:db]
			// Leading zeros aside, a longer run is a larger number.
			ta, tb := trimZeros(na), trimZeros(nb)
			if len(ta) != len(tb) {
				return cmpInt(len(ta), len(tb))
			}
			if ta != tb {
				if ta < tb {
					return -1
				}
				return 1
			}
			if len(na) != len(nb) {
				return cmpInt(len(na), len(nb)) // 01 after 1
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmpInt(int(a[0]), int(b[0]))
		}
		a, b = a[1:], b[1:]
	}
	return cmpInt(len(a), len(b))
}

func digitRun(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

func trimZeros(s string) string {
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
