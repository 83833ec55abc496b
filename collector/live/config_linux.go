package live

import (
	"os"

	"github.com/bondtop/bondtop/bonding"
	"github.com/bondtop/bondtop/collector/internal/hostfiles"
	"github.com/bondtop/bondtop/model"
)

// ReadConfig reads the host's /etc and the running bonds' sysfs.
func (s *Source) ReadConfig(bonds []bonding.Bond) *model.HostConfig {
	return hostfiles.ReadConfig(os.DirFS("/"), bonds)
}
