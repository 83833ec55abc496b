#!/usr/bin/env bash
# check-generate.sh proves the committed eBPF objects and their Go
# bindings (collector/flowmeter/meter_bpf*) are what `make generate` makes
# from bpf/flowmeter.c with the clang that scripts/test-deps.sh installs.
# It regenerates in place and puts the tree back as it was, either way.
set -euo pipefail

cd "$(dirname "$0")/../collector/flowmeter"
files=(meter_bpfel.go meter_bpfel.o meter_bpfeb.go meter_bpfeb.o)
saved=$(mktemp -d)
trap 'for f in "${files[@]}"; do cp "$saved/$f" "$f"; done; rm -rf "$saved"' EXIT
for f in "${files[@]}"; do cp "$f" "$saved/$f"; done

command -v clang >/dev/null || { echo "check-generate: clang missing: run scripts/test-deps.sh" >&2; exit 1; }
${GO:-go} generate .
status=0
for f in "${files[@]}"; do
	if ! cmp -s "$f" "$saved/$f"; then
		echo "check-generate: $f differs from what $(clang --version | head -1) makes of bpf/flowmeter.c: run make generate and commit" >&2
		status=1
	fi
done
[ $status = 0 ] && echo "check-generate: the committed eBPF objects match bpf/flowmeter.c ($(clang --version | head -1))"
exit $status
