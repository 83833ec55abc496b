package drill

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// State is what a drill changed, written before it changes it, so that a
// drill killed mid-way (kill -9, a crash) can be undone by Restore.
type State struct {
	Bond  string `json:"bond"`
	Slave string `json:"slave"`
	How   How    `json:"how"`
	// SlaveWasUp is the slave's admin state before the drill.
	SlaveWasUp bool `json:"slave_was_up"`
	// ActiveBefore is the bond's active slave before the drill ("":
	// none to put back).
	ActiveBefore string    `json:"active_before"`
	PID          int       `json:"pid"`
	Started      time.Time `json:"started"`
}

var bondName = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,15}$`)

// StatePath is the state file of a drill on bond in dir.
func StatePath(dir, bond string) (string, error) {
	if !bondName.MatchString(bond) || bond == "." || bond == ".." {
		return "", fmt.Errorf("%q is not an interface name", bond)
	}
	return filepath.Join(dir, "drill-"+bond+".json"), nil
}

func writeState(dir string, s *State) error {
	path, err := StatePath(dir, s.Bond)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("drill state: %w", err)
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("drill state: %w", err)
	}
	return os.Rename(tmp, path)
}

// ReadState reads the state file a drill on bond left in dir; nil, nil
// when there is none.
func ReadState(dir, bond string) (*State, error) {
	path, err := StatePath(dir, bond)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w (remove it once the bond is checked by hand)", path, err)
	}
	if s.Bond != bond || s.Slave == "" {
		return nil, fmt.Errorf("%s: not a drill state of %s", path, bond)
	}
	return &s, nil
}

func removeState(dir, bond string) error {
	path, err := StatePath(dir, bond)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
