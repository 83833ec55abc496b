// Command package builds bondtop's .deb and .rpm packages with nfpm (as a
// Go library): the binary, the systemd unit, the man page, the bash, zsh
// and fish completions, the Prometheus alert rules and the Grafana
// dashboard, each where its distribution looks for it. `make package`
// runs it; docs/packaging.md lists what goes where.
//
//	go run . -repo ../.. -out DIR -version V -bin amd64=PATH -bin arm64=PATH
//
// The completions are made by running a binary for this machine
// (-completer, default the first -bin that runs here): they list the
// flags of the same source, whatever the target architecture.
package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/goreleaser/nfpm/v2"
	_ "github.com/goreleaser/nfpm/v2/deb" // registers the deb packager
	"github.com/goreleaser/nfpm/v2/files"
	_ "github.com/goreleaser/nfpm/v2/rpm" // registers the rpm packager
)

// binFlags collects -bin ARCH=PATH.
type binFlags map[string]string

func (b binFlags) String() string { return fmt.Sprint(map[string]string(b)) }

func (b binFlags) Set(v string) error {
	arch, path, ok := strings.Cut(v, "=")
	if !ok || arch == "" || path == "" {
		return fmt.Errorf("-bin %q: want ARCH=PATH (amd64=bin/linux-amd64/bondtop)", v)
	}
	b[arch] = path
	return nil
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "package: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("package", flag.ContinueOnError)
	repo := fs.String("repo", "../..", "the bondtop source tree (contrib/, docs/)")
	out := fs.String("out", "dist", "where the packages go")
	version := fs.String("version", "", "the version (git describe); a leading v is dropped")
	completer := fs.String("completer", "", "a bondtop binary that runs here, for the completions (default: the first -bin that does)")
	formats := fs.String("formats", "deb,rpm", "package formats")
	bins := binFlags{}
	fs.Var(bins, "bin", "ARCH=PATH of a static linux binary; repeat per architecture")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(bins) == 0 {
		return errors.New("no -bin ARCH=PATH given")
	}
	v, err := packageVersion(*version)
	if err != nil {
		return err
	}
	stage, err := os.MkdirTemp("", "bondtop-package")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	generated, err := generate(stage, *repo, bins, *completer)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	mtime := sourceDate()
	for _, arch := range sortedKeys(bins) {
		for _, format := range strings.Split(*formats, ",") {
			info := packageInfo(arch, v, mtime)
			info.Contents = contents(*repo, bins[arch], generated)
			info.Scripts = nfpm.Scripts{
				PostInstall: generated["postinst"],
				PreRemove:   generated["prerm"],
				PostRemove:  generated["postrm"],
			}
			path, err := build(info, format, *out)
			if err != nil {
				return fmt.Errorf("%s %s: %w", format, arch, err)
			}
			fmt.Println(path)
		}
	}
	return nil
}

// packageVersion makes git describe's output a version both dpkg and rpm
// order: 1.2.3 stays, v1.2.3-4-gabc becomes 1.2.3+4.gabc, and a tree
// without a tag (abc1234, abc1234-dirty) 0.0.0+git.abc1234(.dirty).
func packageVersion(v string) (string, error) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	if v == "" {
		return "", errors.New("-version is empty (make package passes git describe)")
	}
	if m := regexp.MustCompile(`^(\d+\.\d+\.\d+)-(\d+)-g([0-9a-f]+)(-dirty)?$`).FindStringSubmatch(v); m != nil {
		v = m[1] + "+" + m[2] + ".g" + m[3] + strings.ReplaceAll(m[4], "-", ".")
	} else if !regexp.MustCompile(`^\d+\.\d+`).MatchString(v) {
		v = "0.0.0+git." + v
	}
	v = strings.ReplaceAll(v, "-", ".")
	if !regexp.MustCompile(`^\d[0-9A-Za-z.+~]*$`).MatchString(v) {
		return "", fmt.Errorf("version %q: only digits, letters and . + ~", v)
	}
	return v, nil
}

// sourceDate is the files' time in the packages: SOURCE_DATE_EPOCH when
// set (reproducible builds), now otherwise.
func sourceDate() time.Time {
	var secs int64
	if _, err := fmt.Sscan(os.Getenv("SOURCE_DATE_EPOCH"), &secs); err == nil && secs > 0 {
		return time.Unix(secs, 0).UTC()
	}
	return time.Now().UTC().Truncate(time.Second)
}

func packageInfo(arch, version string, mtime time.Time) *nfpm.Info {
	return nfpm.WithDefaults(&nfpm.Info{
		Name:          "bondtop",
		Arch:          arch,
		Platform:      "linux",
		Version:       version,
		VersionSchema: "none",
		Release:       "1",
		Section:       "net",
		Priority:      "optional",
		Maintainer:    "bondtop maintainers <bondtop@users.noreply.github.com>",
		Vendor:        "bondtop",
		Homepage:      "https://github.com/bondtop/bondtop",
		License:       "Apache-2.0",
		MTime:         mtime,
		Description: "top for Linux bonding, and a Prometheus exporter\n" +
			"bondtop shows, live, what every slave of a bond carries, how the bond and\n" +
			"its LACP partner see each other and why traffic is (not) spread over the\n" +
			"slaves. As a service (bondtop.service) it serves Prometheus metrics on\n" +
			":9843, with alert rules and a Grafana dashboard in /usr/share/bondtop.",
		Overridables: nfpm.Overridables{
			Umask: 0o022,
			RPM: nfpm.RPM{
				Group:   "Applications/System",
				Summary: "top for Linux bonding, and a Prometheus exporter",
			},
		},
	})
}

// Where each distribution looks for what the package holds.
const (
	debUnitDir = "/lib/systemd/system"
	rpmUnitDir = "/usr/lib/systemd/system"
	debZshDir  = "/usr/share/zsh/vendor-completions"
	rpmZshDir  = "/usr/share/zsh/site-functions"
	shareDir   = "/usr/share/bondtop"
	docDir     = "/usr/share/doc/bondtop"
)

// contents lists the package's files; generated holds the staged ones by
// name.
func contents(repo, bin string, generated map[string]string) files.Contents {
	src := func(rel string) string { return filepath.Join(repo, rel) }
	file := func(source, dest string, mode os.FileMode) *files.Content {
		return &files.Content{Source: source, Destination: dest, FileInfo: &files.ContentFileInfo{Mode: mode}}
	}
	only := func(c *files.Content, packager string) *files.Content {
		c.Packager = packager
		return c
	}
	config := func(source, dest, packager string) *files.Content {
		c := file(source, dest, 0o644)
		c.Type = files.TypeConfigNoReplace
		c.Packager = packager
		return c
	}
	cs := files.Contents{
		file(bin, "/usr/bin/bondtop", 0o755),
		only(file(src("contrib/systemd/bondtop.service"), debUnitDir+"/bondtop.service", 0o644), "deb"),
		only(file(src("contrib/systemd/bondtop.service"), rpmUnitDir+"/bondtop.service", 0o644), "rpm"),
		only(file(src("contrib/systemd/bondtop.socket"), debUnitDir+"/bondtop.socket", 0o644), "deb"),
		only(file(src("contrib/systemd/bondtop.socket"), rpmUnitDir+"/bondtop.socket", 0o644), "rpm"),
		config(generated["default"], "/etc/default/bondtop", "deb"),
		config(generated["default"], "/etc/sysconfig/bondtop", "rpm"),
		file(generated["man"], "/usr/share/man/man1/bondtop.1.gz", 0o644),
		file(generated["bash"], "/usr/share/bash-completion/completions/bondtop", 0o644),
		only(file(generated["zsh"], debZshDir+"/_bondtop", 0o644), "deb"),
		only(file(generated["zsh"], rpmZshDir+"/_bondtop", 0o644), "rpm"),
		file(generated["fish"], "/usr/share/fish/vendor_completions.d/bondtop.fish", 0o644),
		file(src("contrib/prometheus/bondtop.rules.yml"), shareDir+"/prometheus/bondtop.rules.yml", 0o644),
		file(src("contrib/grafana/bondtop.json"), shareDir+"/grafana/bondtop.json", 0o644),
	}
	for _, doc := range []string{"docs/prometheus.md", "docs/packaging.md", "docs/web-config.md"} {
		if _, err := os.Stat(src(doc)); err == nil {
			cs = append(cs, file(src(doc), docDir+"/"+filepath.Base(doc), 0o644))
		}
	}
	if _, err := os.Stat(src("LICENSE")); err == nil {
		cs = append(cs, only(file(src("LICENSE"), docDir+"/copyright", 0o644), "deb"))
		lic := file(src("LICENSE"), "/usr/share/licenses/bondtop/LICENSE", 0o644)
		lic.Type = files.TypeRPMLicense
		cs = append(cs, only(lic, "rpm"))
	}
	return cs
}

// generate stages what the packages hold but the tree does not: the man
// page gzipped, the completions, the defaults file, the maintainer
// scripts. It returns their paths by name.
func generate(stage, repo string, bins binFlags, completer string) (map[string]string, error) {
	out := map[string]string{}
	put := func(name, file string, data []byte, mode os.FileMode) error {
		p := filepath.Join(stage, file)
		out[name] = p
		return os.WriteFile(p, data, mode)
	}
	page, err := os.ReadFile(filepath.Join(repo, "docs/bondtop.1"))
	if err != nil {
		return nil, err
	}
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	w.ModTime = sourceDate() // gzip's header: the same bytes for the same tree
	if _, err := w.Write(page); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	if err := put("man", "bondtop.1.gz", gz.Bytes(), 0o644); err != nil {
		return nil, err
	}
	runner, err := pickCompleter(bins, completer)
	if err != nil {
		return nil, err
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		script, err := exec.Command(runner, "completion", shell).Output()
		if err != nil {
			return nil, fmt.Errorf("%s completion %s: %w", runner, shell, err)
		}
		if err := put(shell, "completion."+shell, script, 0o644); err != nil {
			return nil, err
		}
	}
	for name, text := range map[string]string{"default": defaultsFile, "postinst": postInstall, "prerm": preRemove, "postrm": postRemove} {
		if err := put(name, name, []byte(text), 0o755); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pickCompleter returns a binary that runs on this machine.
func pickCompleter(bins binFlags, completer string) (string, error) {
	if completer != "" {
		return completer, nil
	}
	for _, arch := range sortedKeys(bins) {
		if err := exec.Command(bins[arch], "--version").Run(); err == nil {
			return bins[arch], nil
		}
	}
	return "", errors.New("no -bin runs on this machine: give -completer PATH for the completions")
}

func build(info *nfpm.Info, format, outDir string) (string, error) {
	pkgr, err := nfpm.Get(format)
	if err != nil {
		return "", err
	}
	info = nfpm.WithDefaults(info)
	if err := nfpm.PrepareForPackager(info, format); err != nil {
		return "", err
	}
	if err := nfpm.Validate(info); err != nil {
		return "", err
	}
	path := filepath.Join(outDir, pkgr.ConventionalFileName(info))
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if err := pkgr.Package(info, f); err != nil {
		f.Close()
		os.Remove(path)
		return "", err
	}
	return path, f.Close()
}

func sortedKeys(m binFlags) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// defaultsFile is /etc/default/bondtop (Debian) and /etc/sysconfig/bondtop
// (RPM), which the unit reads.
const defaultsFile = `# Settings of bondtop.service (bondtop --headless $BONDTOP_LISTEN $BONDTOP_ARGS);
# see bondtop -h, docs/prometheus.md and docs/packaging.md.
#
# Where to serve /metrics: --listen ADDR:PORT (the unit's default is
# "--listen :9843"), or --web.systemd-socket to serve on the socket of
# bondtop.socket (then: systemctl disable bondtop; systemctl enable --now bondtop.socket).
#BONDTOP_LISTEN="--listen 127.0.0.1:9843"
#
# Other flags, e.g.
#   BONDTOP_ARGS="--web.config.file /etc/bondtop/web.yml"
#   BONDTOP_ARGS="--interval 5s bond0"
BONDTOP_ARGS=""
`

// The maintainer scripts: systemd learns of the unit; the service is not
// enabled by the package (systemctl enable --now bondtop), and is stopped
// and disabled when the package is removed. dpkg passes "remove", rpm 0
// for the last copy going away.
const postInstall = `#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
	# An upgrade restarts a running exporter on the new binary.
	systemctl try-restart bondtop.service >/dev/null 2>&1 || true
fi
exit 0
`

const preRemove = `#!/bin/sh
set -e
if [ "$1" = remove ] || [ "$1" = 0 ]; then
	if [ -d /run/systemd/system ]; then
		systemctl --no-reload disable --now bondtop.service bondtop.socket >/dev/null 2>&1 || true
	fi
fi
exit 0
`

const postRemove = `#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
fi
exit 0
`
