// Package intent owns what the host's configuration says a bond should
// be: one pure parser per system an admin configures bonds with — netplan
// (netplan.go), NetworkManager keyfiles (nm.go), Red Hat ifcfg files
// (ifcfg.go), systemd-networkd (networkd.go), Debian ifupdown and
// ifupdown2 (ifupdown.go) — each turning the files as that tool writes
// them into Bonds whose options are in the kernel's own words (option
// names as in /sys/class/net/BOND/bonding, values as the kernel prints
// them: "802.3ad", "layer3+4", "100"), with the file and line each came
// from. Read finds the files under a root (the live "/" or a support
// bundle) and names the ones it could not read instead of guessing.
//
// Comparing the intent with the running bond is diagnose's job.
//
// Imports: no package of ours.
package intent
