package programpages

// Trimmed is what Trim did.
type Trimmed struct {
	Unmapped int // the program's pages that were mapped and are no longer
	Kept     int // pages left mapped because they hold the process's own writes
}
