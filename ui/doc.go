// Package ui owns bondtop's interactive dashboard: the screen an admin keeps
// open during an incident. It turns model Snapshots into a header, a
// slaves table, braille traffic graphs, an LACP (or failover) panel, an
// events log and overlays (help, slave details, load, diagnosis), and maps
// keys to actions.
//
// The split is model -> view: Model holds what the screen shows (the latest
// Snapshot, the selected bond, sort order, graph window, pause, the events
// log) and knows nothing of tview; the views read a Model and draw. ui never
// reads /proc, /sys or netlink: it consumes Snapshots and the Sampler's
// History only. Only the tview event loop touches widgets and the Model: the
// sampler's goroutine hands snapshots over with QueueUpdateDraw, and key
// handlers never block.
package ui
