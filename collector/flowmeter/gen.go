package flowmeter

// The eBPF objects are generated and committed, so a build needs no clang.
// `make generate` runs this with the clang of scripts/test-deps.sh;
// `make check-generate` proves the committed files are what it produces.
//go:generate go tool bpf2go -cc clang -strip llvm-strip -cflags "-O2 -g -Wall -Werror" -tags linux -target bpfel,bpfeb -type flow_key -type flow_counters -type lost_key -type lost_counters -type cpu_state -type error_key -type flow4_key meter bpf/flowmeter.c
