package collector

import (
	"time"

	"github.com/bondtop/bondtop/model"
)

// relayed fills the bonds of a Relay source's snapshot with what the
// other bondtop measured: its rates (and the shares they make), its
// findings and the data's age. The values are allocated here, not in
// the snapshot's rooms: a relayed fleet is read every few seconds, not
// at the dashboard's 100 ms.
func relayed(snap *model.Snapshot, r Relay, now time.Time) {
	for i := range snap.Bonds {
		b := &snap.Bonds[i]
		b.RxBps, b.TxBps = relayedRates(r, b.Name, "")
		b.RxPps, b.TxPps = nil, nil
		for j := range b.Slaves {
			s := &b.Slaves[j]
			s.RxBps, s.TxBps = relayedRates(r, b.Name, s.Name)
			s.RxPps, s.TxPps = nil, nil
			s.ShareRx, s.ShareTx = nil, nil
		}
		fillShares(&numbers{}, b.Slaves)
		if b.Findings == nil {
			b.Findings = r.Findings(b.Name)
		}
		if age, ok := r.DataAge(b.Name, now); ok {
			sec := age.Seconds()
			b.DataAgeSeconds = &sec
		}
	}
}

func relayedRates(r Relay, bond, slave string) (rx, tx *float64) {
	rxBps, txBps, ok := r.Rate(bond, slave)
	if !ok {
		return nil, nil
	}
	return &rxBps, &txBps
}
