package main

import (
	"fmt"
	"io"
)

// runLoad is `bondtop load ARGS`; it returns the exit code.
func runLoad(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "bondtop: load: not built yet")
	return exitRuntime
}
