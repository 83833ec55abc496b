package collector

import (
	"time"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/model"
)

// readsMAC reports whether p hashes the destination MAC, so a flow whose
// next hop's MAC is unknown cannot be placed.
func readsMAC(p bonding.Policy) bool {
	return p == bonding.PolicyLayer2 || p == bonding.PolicyLayer23 || p == bonding.PolicyEncap23
}

// socketRate is one socket's rates over a refresh interval.
type socketRate struct {
	ok     bool
	tx, rx float64
}

// BuildFlowTable predicts the slave of each of sockets that crosses b
// under kernel k: the table the Sampler makes at a refresh, without
// rates (seconds is the table's Seconds). A source's tests check what it
// read against it.
func BuildFlowTable(b *bonding.Bond, k bonding.KernelVersion, at time.Time, seconds float64, sockets []model.Socket) *model.FlowTable {
	return buildFlowTable(b, k, at, seconds, sockets, make([]socketRate, len(sockets)))
}

// buildFlowTable predicts every socket of sockets that crosses b. rates
// parallels sockets; seconds is their interval.
func buildFlowTable(b *bonding.Bond, k bonding.KernelVersion, at time.Time, seconds float64, sockets []model.Socket, rates []socketRate) *model.FlowTable {
	t := &model.FlowTable{Bond: b.Name, Time: at, Seconds: seconds, Kernel: k}
	t.Slaves = make([]model.SlaveFlows, len(b.Slaves))
	index := make(map[string]int, len(b.Slaves))
	for i := range b.Slaves {
		t.Slaves[i].Slave = b.Slaves[i].Name
		index[b.Slaves[i].Name] = i
	}
	pred, err := bonding.NewPredictor(b, k)
	if err != nil {
		t.Err = err.Error()
	}
	macUnknown := pred != nil && readsMAC(pred.Policy) && (pred.Mode == bonding.ModeXOR || pred.Mode == bonding.Mode8023AD || (pred.Mode == bonding.ModeTLB && !pred.TLBDynamicLB))
	n := 0
	for i := range sockets {
		if sockets[i].Path.Bond == b.Name {
			n++
		}
	}
	t.Flows = make([]model.Flow, 0, n)
	for i := range sockets {
		s := &sockets[i]
		if s.Path.Bond != b.Name {
			continue
		}
		f := model.Flow{Socket: *s}
		if r := rates[i]; r.ok {
			f.HaveRate, f.TxBps, f.RxBps = true, r.tx, r.rx
		}
		switch {
		case pred == nil:
			f.Choice = bonding.Choice{Outcome: bonding.Unpredictable, Index: -1, Reason: t.Err}
		case macUnknown && !s.Path.HaveDstMAC:
			f.Choice = bonding.Choice{Outcome: bonding.Unpredictable, Index: -1, Count: len(pred.Usable),
				Reason: "the next hop's MAC is not in the neighbour table yet, and " + pred.Policy.String() + " hashes it"}
		default:
			p := f.Packet()
			f.Choice = predict(pred, &p)
		}
		switch f.Choice.Outcome {
		case bonding.Unpredictable:
			t.Unpredictable++
			if t.Reason == "" {
				t.Reason = f.Choice.Reason
			}
		case bonding.Dropped:
			t.Dropped++
		case bonding.EverySlave:
			for j := range t.Slaves {
				addFlow(&t.Slaves[j], &f)
			}
		default:
			if j, ok := index[f.Choice.Slave]; ok {
				addFlow(&t.Slaves[j], &f)
			}
		}
		t.Flows = append(t.Flows, f)
	}
	return t
}

// addFlow counts f in s.
func addFlow(s *model.SlaveFlows, f *model.Flow) {
	s.Flows++
	if f.HaveRate {
		s.TxBps += f.TxBps
		s.RxBps += f.RxBps
	}
}

// predict is pred's choice for p, a packet the hash rejects (addresses
// missing) counting as unpredictable with the reason.
func predict(pred *bonding.Predictor, p *bonding.Flow) bonding.Choice {
	c, err := pred.Predict(p)
	if err != nil {
		c = bonding.Choice{Outcome: bonding.Unpredictable, Index: -1, Reason: err.Error()}
	}
	return c
}
