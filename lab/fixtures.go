package lab

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// saveFixtures unpacks the guest's base64 tar.gz (the "fixture" lines)
// under dest (testdata/lab for `make lab-fixtures`): one tree per scenario,
// each laid out as a root (proc/net/bonding/..., sys/class/net/...) for
// `bondtop --root` and the parsers' unit tests. A scenario's old tree is
// replaced whole.
func saveFixtures(dest string, b64 []string) error {
	data, err := base64.StdEncoding.DecodeString(strings.Join(b64, ""))
	if err != nil {
		return err
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	cleared := map[string]bool{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean(hdr.Name)
		if !filepath.IsLocal(name) {
			return fmt.Errorf("fixture path %q leaves the fixture directory", hdr.Name)
		}
		scenario, _, _ := strings.Cut(name, string(filepath.Separator))
		if !cleared[scenario] {
			// A fresh capture replaces the old tree whole.
			if err := os.RemoveAll(filepath.Join(dest, scenario)); err != nil {
				return err
			}
			cleared[scenario] = true
		}
		path := filepath.Join(dest, name)
		switch hdr.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o755)
		case tar.TypeSymlink:
			os.MkdirAll(filepath.Dir(path), 0o755)
			err = os.Symlink(hdr.Linkname, path)
		case tar.TypeReg:
			os.MkdirAll(filepath.Dir(path), 0o755)
			var body []byte
			if body, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(path, body, 0o644)
			}
		}
		if err != nil {
			return err
		}
	}
}
