//go:build !linux

package metrics

import "github.com/bondtop/bondtop/internal/promtext"

// collectProcess adds nothing off Linux: the process_* metrics are read
// from /proc (process_linux.go). bondtop runs on Linux; this stub keeps
// the package building for the platform checks (go vet for darwin).
func collectProcess(*promtext.Scrape) {}
