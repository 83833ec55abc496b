//go:build linux

package guest

import (
	"testing"

	"github.com/bondtop/bondtop/internal/programpages"
)

// TestProgramPagesTrim: on the lab's kernels (6.1 and 6.12), Trim
// unmaps the guest test binary's read-only pages, which pagemap reports
// as the file's (none as the process's own), and the binary runs on: the
// rest of this test and the tests after it are that code, mapped back as
// it runs.
func TestProgramPagesTrim(t *testing.T) {
	before := programResident(t)
	got, err := programpages.Trim()
	if err != nil {
		t.Fatal(err)
	}
	after := programResident(t)
	t.Logf("kernel %s: the binary's read-only pages: %d resident, trimmed %+v, %d resident after", Kernel(t), before, got, after)
	if got.Unmapped == 0 || after >= before {
		t.Errorf("%d resident before, %d after, %d unmapped: nothing left", before, after, got.Unmapped)
	}
	if got.Kept != 0 {
		t.Errorf("%d pages of the program kept as the process's own, with no debugger", got.Kept)
	}
}

// programResident counts the resident pages of this binary's read-only
// mappings, from /proc/self/maps and /proc/self/pagemap.
func programResident(t *testing.T) int {
	t.Helper()
	maps, err := programpages.ProgramMappings("self")
	if err != nil {
		t.Fatal(err)
	}
	var readOnly []programpages.Mapping
	for _, m := range maps {
		if !m.Writable {
			readOnly = append(readOnly, m)
		}
	}
	present, err := programpages.PresentPages("self", readOnly)
	if err != nil {
		t.Fatal(err)
	}
	return len(present)
}
