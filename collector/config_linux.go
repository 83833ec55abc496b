package collector

import (
	"os"

	"github.com/bondtop/bondtop/bonding"
)

// ReadConfig reads the host's /etc and the running bonds' sysfs.
func (s *LiveSource) ReadConfig(bonds []bonding.Bond) *HostConfig {
	return readHostConfig(os.DirFS("/"), bonds)
}
