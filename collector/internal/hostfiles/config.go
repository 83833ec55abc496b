package hostfiles

import (
	"io/fs"
	"strings"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/intent"
	"github.com/bondtop/bondtop/model"
)

// ReadConfig reads the configuration under fsys and the running
// settings of bonds; fsys must resolve symbolic links (sysfs is made of
// them).
func ReadConfig(fsys fs.FS, bonds []bonding.Bond) *model.HostConfig {
	hc := &model.HostConfig{Intent: intent.Read(fsys), Running: map[string]*model.RunningConfig{}}
	for i := range bonds {
		b := &bonds[i]
		rc := &model.RunningConfig{Devices: map[string]bonding.Device{}}
		rc.Options, _ = bonding.ReadOptions(fsys, b.Name)
		if data, err := fs.ReadFile(fsys, bonding.SysClassNet+"/"+b.Name+"/address"); err == nil {
			rc.HWAddr = strings.TrimSpace(string(data))
		}
		for j := range b.Slaves {
			rc.Devices[b.Slaves[j].Name] = bonding.ReadDevice(fsys, b.Slaves[j].Name)
		}
		hc.Running[b.Name] = rc
	}
	return hc
}
