// Package term is the dashboard's terminal layer: Screen, a tcell screen
// that sends only the cells a frame changed; the painter that writes those
// cells to the terminal itself, as tcell would; and the raw, non-blocking
// tty writer behind it. It knows nothing of bonds or panels: package ui
// draws on a Screen, and cmd/bondtop never sees one.
package term
