#!/usr/bin/env bash
# test-deps.sh installs the peers the unit tests talk to: iperf3 (the load
# engine is tested against a real `iperf3 -s` and `iperf3 -c`; the product
# never runs it). Idempotent: a tool already on PATH is left alone. Other
# test-only tools belong here too, one block each.
set -euo pipefail

fail() { echo "test-deps: $*" >&2; exit 1; }

# Run privileged commands directly as root, through sudo otherwise.
as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"
	elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo "$@"
	else fail "needs root (or password-less sudo) to run: $*"
	fi
}

updated=
apt_install() {
	command -v apt-get >/dev/null || fail "no apt-get here: install $* by hand"
	# A fresh machine has no package lists; refresh once per run.
	if [ -z "$updated" ]; then as_root apt-get update -qq; updated=1; fi
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# iperf3: the load tests' peer (Debian bookworm ships 3.12).
if ! command -v iperf3 >/dev/null; then
	apt_install iperf3
fi
echo "test-deps: $(iperf3 --version | head -1)"

# tmux: the dashboard's terminal tests run the real binary in a tmux pane
# (send-keys, capture-pane).
if ! command -v tmux >/dev/null; then
	apt_install tmux
fi
echo "test-deps: $(tmux -V)"

# netplan: the netplan reader is checked against what the real `netplan
# generate --root-dir` makes of test YAML (networkd units, NetworkManager
# keyfiles). Debian's package is netplan.io; the binary is /usr/sbin/netplan.
if ! command -v netplan >/dev/null && [ ! -x /usr/sbin/netplan ]; then
	apt_install netplan.io
fi
echo "test-deps: netplan $(dpkg-query -W -f='${Version}' netplan.io 2>/dev/null || echo present)"

# clang and llvm-strip: the flow meter's eBPF program is compiled from C
# (make generate), and check-generate proves the committed objects are what
# this clang makes (Debian bookworm: clang 14).
if ! command -v clang >/dev/null || ! command -v llvm-strip >/dev/null; then
	apt_install clang llvm
fi
echo "test-deps: $(clang --version | head -1)"

# promtool and prometheus: the shipped alert rules (contrib/prometheus) are
# checked with `promtool check rules`, run against scrapes of the real-kernel
# fixtures with `promtool test rules`, and loaded by a real Prometheus that
# scrapes the demo. Debian ships both in the prometheus package.
if ! command -v promtool >/dev/null || ! command -v prometheus >/dev/null; then
	apt_install prometheus
fi
echo "test-deps: $(promtool --version 2>&1 | head -1)"

# lldpd: a real LLDP/CDP agent, the judge of the neighbour decoder (it sends
# on one end of a veth pair in a network namespace; lldpcli reports what it
# hears on the other).
if ! command -v lldpd >/dev/null || ! command -v lldpcli >/dev/null; then
	apt_install lldpd
fi
echo "test-deps: $(lldpd -v 2>&1 | head -1)"

# openvswitch-switch: the OVS source is judged against a real ovsdb-server
# and ovs-vswitchd that the tests start themselves in a private run directory
# (userspace datapath, no kernel module), and against ovs-vsctl/ovs-appctl.
# The package's own service is not needed; the tests never touch it.
if ! command -v ovs-vswitchd >/dev/null && [ ! -x /usr/sbin/ovs-vswitchd ]; then
	apt_install openvswitch-switch
fi
echo "test-deps: openvswitch $(dpkg-query -W -f='${Version}' openvswitch-switch 2>/dev/null || echo present)"

# ethtool: the judge of the physical layer per slave. What bondtop reads
# over ethtool netlink (link detected, FEC, module EEPROM) is compared with
# what the real `ethtool DEV`, `ethtool --show-fec DEV` and `ethtool -m DEV`
# report on a veth in a network namespace. The product never runs it.
if ! command -v ethtool >/dev/null && [ ! -x /usr/sbin/ethtool ] && [ ! -x /sbin/ethtool ]; then
	apt_install ethtool
fi
echo "test-deps: $( (command -v ethtool >/dev/null && ethtool --version) || /usr/sbin/ethtool --version)"

# systemd-analyze and man: the shipped unit (contrib/systemd) is judged by
# `systemd-analyze security --offline=true` (exposure at most 3.0) and
# `systemd-analyze verify`, which runs man for its Documentation= page.
if ! command -v systemd-analyze >/dev/null; then
	apt_install systemd
fi
if ! command -v man >/dev/null; then
	apt_install man-db
fi
echo "test-deps: $(systemd-analyze --version | head -1)"

# rpm and dpkg-deb: `make package` builds .deb and .rpm files (nfpm, a Go
# library); the tests unpack the .deb with dpkg-deb and run the binary it
# holds, and read the .rpm with `rpm -qp` (Debian packages rpm).
if ! command -v rpm >/dev/null; then
	apt_install rpm
fi
echo "test-deps: $(rpm --version) and $(dpkg-deb --version | head -1)"
