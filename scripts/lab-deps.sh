#!/usr/bin/env bash
# lab-deps.sh installs what the real-kernel lab (lab/) needs: qemu to boot a
# VM, Debian's kernels unpacked into .cache/lab/ (the build machines' own
# kernel has no bonding driver), and the tools the guest tests use as judges
# (iproute2's tc, bpftool), which the lab copies into the VM with their
# shared libraries. Idempotent: each step is skipped when its result is
# already there.
#
# The lab boots two kernels, Debian bookworm's own and the newer one it
# offers as linux-image-6.12-amd64, so every scenario is checked on both
# sides of the kernel changes bondtop cares about (TCX at 6.6, for one).
#
# Layout it leaves behind (lab/ reads it):
#   .cache/lab/linux-image-<version>/   each unpacked kernel package
#   .cache/lab/kernel-6.1  -> linux-image-6.1.<n>-amd64      (linux-image-amd64)
#   .cache/lab/kernel-6.12 -> linux-image-6.12.<n>+deb12-amd64 (linux-image-6.12-amd64)
#   .cache/lab/kernel      -> the same as kernel-6.1 (what older checkouts read)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache="$root/.cache/lab"

fail() { echo "lab-deps: $*" >&2; exit 1; }

# The kernels: the name lab/ knows each by, and the Debian meta package
# whose dependency names the versioned package of the day.
kernels="6.1:linux-image-amd64 6.12:linux-image-6.12-amd64"

# The judges the guest tests may run, as host commands and their packages.
judges="tc:iproute2 bpftool:bpftool ethtool:ethtool"

have_kernel() { ls "$cache/kernel-$1"/boot/vmlinuz-* >/dev/null 2>&1; }

have_all() {
	command -v qemu-system-x86_64 >/dev/null || return 1
	for k in $kernels; do have_kernel "${k%%:*}" || return 1; done
	for j in $judges; do PATH=$PATH:/usr/sbin:/sbin command -v "${j%%:*}" >/dev/null || return 1; done
}

# Without root (or apt) nothing can be installed: what is there will do.
if [ "$(id -u)" != 0 ] && ! sudo -n true 2>/dev/null || ! command -v apt-get >/dev/null; then
	if have_all; then
		echo "lab-deps: cannot install (not root or no apt); using qemu, the kernels and the judges as they are"
		exit 0
	fi
	fail "the lab needs root and apt to install qemu-system-x86, iproute2 and bpftool and to fetch Debian's kernels into $cache; run make lab-deps as root"
fi

# Run privileged commands directly as root, through sudo otherwise.
as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"
	elif sudo -n true 2>/dev/null; then sudo "$@"
	else fail "needs root (or password-less sudo) to run: $*"
	fi
}

# apt's package lists go stale (or are missing on a fresh machine): refresh
# them when older than a day, so the kernel names resolve to ones that the
# mirror still serves.
lists_fresh() {
	[ -n "$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mmin -1440 2>/dev/null | head -1)" ]
}
updated=
apt_update() {
	if [ -z "$updated" ]; then as_root apt-get update -qq; updated=1; fi
}
apt_install() {
	lists_fresh || apt_update
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# 1. qemu.
command -v qemu-system-x86_64 >/dev/null || apt_install qemu-system-x86
echo "lab-deps: $(qemu-system-x86_64 --version | head -1)"

# 2. The judges: tc (clsact filters), bpftool (programs, maps) and ethtool
# (link state, FEC, module EEPROM), run in
# the guest only by tests, never by bondtop.
for j in $judges; do
	PATH=$PATH:/usr/sbin:/sbin command -v "${j%%:*}" >/dev/null || apt_install "${j##*:}"
done
echo "lab-deps: judges $(PATH=$PATH:/usr/sbin:/sbin command -v tc bpftool ethtool | tr '\n' ' ')"

# 3. The kernels. Each meta package depends on the versioned package of the
# day; that one is downloaded and unpacked once.
# The versioned package a meta package depends on. awk reads to the end:
# an early exit could kill apt-cache with SIGPIPE, which pipefail would
# turn into a failure.
depends() { apt-cache depends "$1" 2>/dev/null | awk '/Depends: linux-image-/ && !n {print $2; n=1}'; }

mkdir -p "$cache"
tmp=
trap '[ -z "$tmp" ] || rm -rf "$tmp"' EXIT
for k in $kernels; do
	name=${k%%:*} meta=${k##*:}
	kpkg=$(depends "$meta" || true)
	if [ -z "$kpkg" ]; then
		apt_update
		kpkg=$(depends "$meta" || true)
	fi
	[ -n "$kpkg" ] || fail "apt-cache depends $meta names no kernel package"
	if ! ls "$cache/$kpkg"/boot/vmlinuz-* >/dev/null 2>&1; then
		lists_fresh || apt_update
		tmp=$(mktemp -d "$cache/.download.XXXXXX")
		# apt-get download drops privileges to _apt, which must be able to
		# write there; the warning about running unsandboxed as root is noise.
		chmod 777 "$tmp"
		(cd "$tmp" && apt-get download -qq "$kpkg" 2>&1 | grep -v unsandboxed || true)
		deb=$(ls "$tmp"/"$kpkg"_*.deb 2>/dev/null | head -1)
		[ -n "$deb" ] || fail "apt-get download $kpkg failed"
		dpkg-deb -x "$deb" "$tmp/tree"
		rm -rf "${cache:?}/$kpkg"
		mv "$tmp/tree" "$cache/$kpkg"
		rm -rf "$tmp"
		tmp=
	fi
	[ "$(readlink "$cache/kernel-$name" 2>/dev/null)" = "$kpkg" ] || ln -sfn "$kpkg" "$cache/kernel-$name"
	if [ "$name" = 6.1 ] && [ "$(readlink "$cache/kernel" 2>/dev/null)" != "$kpkg" ]; then
		ln -sfn "$kpkg" "$cache/kernel"
	fi
	echo "lab-deps: kernel $name is $kpkg ($cache/kernel-$name)"
done
