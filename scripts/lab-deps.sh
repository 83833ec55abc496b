#!/usr/bin/env bash
# lab-deps.sh installs what the real-kernel lab (lab/) needs: qemu to boot a
# VM, and Debian's kernel, unpacked into .cache/lab/, because the build
# machines' own kernel has no bonding driver. Idempotent: each step is
# skipped when its result is already there.
#
# Layout it leaves behind (lab/ reads it):
#   .cache/lab/linux-image-<version>/   the unpacked kernel package
#   .cache/lab/kernel -> linux-image-<version>
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache="$root/.cache/lab"

fail() { echo "lab-deps: $*" >&2; exit 1; }

have_kernel() { ls "$cache"/kernel/boot/vmlinuz-* >/dev/null 2>&1; }

# Without root (or apt) nothing can be installed: what is there will do.
if [ "$(id -u)" != 0 ] && ! sudo -n true 2>/dev/null || ! command -v apt-get >/dev/null; then
	if command -v qemu-system-x86_64 >/dev/null && have_kernel; then
		echo "lab-deps: cannot install (not root or no apt); using qemu and $(readlink "$cache/kernel") as they are"
		exit 0
	fi
	fail "the lab needs root and apt to install qemu-system-x86 and fetch Debian's kernel into $cache/kernel; run make lab-deps as root"
fi

# Run privileged commands directly as root, through sudo otherwise.
as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"
	elif sudo -n true 2>/dev/null; then sudo "$@"
	else fail "needs root (or password-less sudo) to run: $*"
	fi
}

# apt's package lists go stale (or are missing on a fresh machine): refresh
# them when older than a day, so the kernel name resolves to one that the
# mirror still serves.
lists_fresh() {
	[ -n "$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mmin -1440 2>/dev/null | head -1)" ]
}
updated=
apt_update() {
	if [ -z "$updated" ]; then as_root apt-get update -qq; updated=1; fi
}

# 1. qemu.
if ! command -v qemu-system-x86_64 >/dev/null; then
	lists_fresh || apt_update
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends qemu-system-x86 >/dev/null
fi
echo "lab-deps: $(qemu-system-x86_64 --version | head -1)"

# 2. The kernel. linux-image-amd64 is a meta package; the real one is the
# version it depends on today.
lists_fresh || apt_update
kpkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/ {print $2; exit}')
[ -n "$kpkg" ] || fail "apt-cache depends linux-image-amd64 names no kernel package"

mkdir -p "$cache"
if ! ls "$cache/$kpkg"/boot/vmlinuz-* >/dev/null 2>&1; then
	tmp=$(mktemp -d "$cache/.download.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	# apt-get download drops privileges to _apt, which must be able to
	# write there; the warning about running unsandboxed as root is noise.
	chmod 777 "$tmp"
	(cd "$tmp" && apt-get download -qq "$kpkg" 2>&1 | grep -v unsandboxed || true)
	deb=$(ls "$tmp"/"$kpkg"_*.deb 2>/dev/null | head -1)
	[ -n "$deb" ] || fail "apt-get download $kpkg failed"
	dpkg-deb -x "$deb" "$tmp/tree"
	rm -rf "$cache/$kpkg"
	mv "$tmp/tree" "$cache/$kpkg"
fi
[ "$(readlink "$cache/kernel" 2>/dev/null)" = "$kpkg" ] || ln -sfn "$kpkg" "$cache/kernel"
echo "lab-deps: kernel $kpkg in $cache/kernel"
