//go:build !linux

package programpages

import "errors"

// Trim does nothing where there is no /proc/self/pagemap to tell the
// program's pages from the process's own.
func Trim() (Trimmed, error) { return Trimmed{}, errors.ErrUnsupported }
