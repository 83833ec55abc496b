package ovs

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func addFixtures(f *testing.F, names ...string) {
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
}

// FuzzDecodeMessage feeds a byte stream to the JSON-RPC decoder and any
// result to the OVSDB row decoder: errors are fine, panics are not.
func FuzzDecodeMessage(f *testing.F) {
	tr, err := os.ReadFile(filepath.Join("testdata", "transact.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(`{"result":` + string(bytes.TrimSpace(tr)) + `,"error":null,"id":"1"}`)
	f.Add(`{"method":"echo","params":[],"id":"e"}{"result":"x","id":1}`)
	f.Add(`{"result":[{"rows":[{"ports":["uuid","x"],"other_config":["map",[["a","b"]]],"ofport":["set",[]]}]},{"rows":[]},{"rows":[]}],"id":1}`)
	f.Fuzz(func(t *testing.T, s string) {
		d := newDecoder(bytes.NewReader([]byte(s)), maxMessage)
		for range 4 {
			m, err := d.next()
			if err != nil {
				return
			}
			if m.Result != nil {
				if db, err := decodeTransact(m.Result); err == nil {
					BondsFromDB(db)
				}
				var text string
				if json.Unmarshal(m.Result, &text) == nil {
					_, _ = ParseBondShow(text)
				}
			}
		}
	})
}

func FuzzParseBondShow(f *testing.F) {
	addFixtures(f, "bond-show.txt", "bond-show-down.txt")
	f.Fuzz(func(t *testing.T, s string) {
		bonds, err := ParseBondShow(s)
		if err != nil {
			return
		}
		for _, b := range bonds {
			for _, m := range b.Members {
				for _, bk := range m.Buckets {
					if bk.Hash < 0 || bk.Hash > 255 || bk.LoadKB < 0 {
						t.Fatalf("bucket %+v", bk)
					}
				}
			}
		}
	})
}

func FuzzParseLACPShow(f *testing.F) {
	addFixtures(f, "lacp-show.txt", "lacp-show-down.txt", "lacp-show-stats.txt")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseLACPShow(s)
		_, _ = ParseLACPStats(s)
	})
}
