package main

import (
	"fmt"
	"io"
)

// runServe is `bondtop serve ARGS`; it returns the exit code.
func runServe(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "bondtop: serve: not built yet")
	return exitRuntime
}
