package webguard

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	config_util "github.com/prometheus/common/config"
	"github.com/prometheus/exporter-toolkit/web"
	yamlv2 "go.yaml.in/yaml/v2"
	"go.yaml.in/yaml/v3"
	"golang.org/x/crypto/bcrypt"
)

// MaxBcryptCost is the highest bcrypt cost a basic_auth_users hash may
// have. Each step doubles the time of a check: cost 12 is some 250 ms of
// a core, cost 31 some 30 hours, which one request with any user name
// would spend.
const MaxBcryptCost = 12

// inlined are the tls_server_config keys that name a file, and the keys
// that hold the same content inline: the snapshot carries the content,
// so the toolkit never reads a file bondtop did not check.
var inlined = [][2]string{{"cert_file", "cert"}, {"key_file", "key"}, {"client_ca_file", "client_ca"}}

// snapshot is one complete, checked version of the web config: the YAML
// handed to the toolkit (every file it names inlined), the config as the
// toolkit parses it, and the files it was made from.
type snapshot struct {
	yaml   []byte
	config web.Config
	stamps []stamp
}

// protection is what a config protects the metrics with.
type protection struct {
	tls        bool // HTTPS
	users      bool // basic auth
	clientCert bool // a client certificate is required
}

func (s *snapshot) protection() protection {
	t := &s.config.TLSConfig
	return protection{
		tls:        t.IsEnabled(),
		users:      len(s.config.Users) > 0,
		clientCert: t.IsEnabled() && slices.Contains([]string{"RequireAnyClientCert", "RequireClientCert", "RequireAndVerifyClientCert"}, t.ClientAuth),
	}
}

// lost names what next protects with that p did, "" when nothing.
func (p protection) lost(next protection) string {
	var l []string
	if p.tls && !next.tls {
		l = append(l, "TLS")
	}
	if p.users && !next.users {
		l = append(l, "basic auth (basic_auth_users)")
	}
	if p.clientCert && !next.clientCert {
		l = append(l, "required client certificates")
	}
	return strings.Join(l, ", ")
}

// load reads the web config at path and the files it names, and checks
// the result with the toolkit (web.Validate, on the snapshot written into
// dir) and with bondtop's own bound on bcrypt costs. Nothing is read
// that could block or be huge (readFile).
func load(path, dir string) (*snapshot, error) {
	raw, st, err := readFile(path)
	if err != nil {
		return nil, err
	}
	s := &snapshot{stamps: []stamp{st}}
	// The toolkit's parser first, so that a typo is named as every
	// exporter names it (before any file the typo names is read).
	var first web.Config
	if err := yamlv2.UnmarshalStrict(raw, &first); err != nil {
		return nil, err
	}
	// And its word on a half TLS section, before the files are read.
	if t := &first.TLSConfig; t.IsEnabled() {
		switch {
		case t.TLSCertPath == "" && t.TLSCert == "":
			return nil, errors.New("missing one of cert or cert_file")
		case t.TLSKeyPath == "" && t.TLSKey == "":
			return nil, errors.New("missing one of key or key_file")
		}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	if err := s.inline(&doc, filepath.Dir(path)); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		s.yaml = raw // an empty file: the toolkit's defaults
	} else if s.yaml, err = yaml.Marshal(&doc); err != nil {
		return nil, err
	}
	if err := yamlv2.UnmarshalStrict(s.yaml, &s.config); err != nil {
		return nil, err
	}
	if err := checkCosts(s.config.Users); err != nil {
		return nil, err
	}
	tmp, err := writeTemp(dir, s.yaml)
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	if err := web.Validate(tmp); err != nil {
		return nil, err
	}
	return s, nil
}

// inline replaces cert_file, key_file and client_ca_file in the YAML
// document by cert, key and client_ca holding the files' content (read
// relative to dir, as the toolkit reads them). A file named beside the
// same content inline wins, as in the toolkit.
func (s *snapshot) inline(doc *yaml.Node, dir string) error {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil // the toolkit says what is wrong with it
	}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value != "tls_server_config" || top.Content[i+1].Kind != yaml.MappingNode {
			continue
		}
		m := top.Content[i+1]
		for _, pair := range inlined {
			fileKey, textKey := pair[0], pair[1]
			v := mapValue(m, fileKey)
			if v == nil || v.Kind != yaml.ScalarNode || v.Value == "" {
				continue
			}
			p := v.Value
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			b, st, err := readFile(p)
			if err != nil {
				return fmt.Errorf("tls_server_config: %s: %w", fileKey, err)
			}
			s.stamps = append(s.stamps, st)
			deleteKey(m, textKey)
			for j := 0; j+1 < len(m.Content); j += 2 {
				if m.Content[j].Value == fileKey {
					m.Content[j].Value = textKey
					m.Content[j+1] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: string(b), Style: yaml.LiteralStyle}
				}
			}
		}
	}
	return nil
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func deleteKey(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = slices.Delete(m.Content, i, i+2)
			return
		}
	}
}

// checkCosts refuses a bcrypt cost above MaxBcryptCost, naming the users.
func checkCosts(users map[string]config_util.Secret) error {
	var high []string
	for name, hash := range users {
		if c, err := bcrypt.Cost([]byte(hash)); err == nil && c > MaxBcryptCost {
			high = append(high, fmt.Sprintf("%q (cost %d)", name, c))
		}
	}
	if len(high) == 0 {
		return nil
	}
	sort.Strings(high)
	return fmt.Errorf("basic_auth_users: %s: bondtop takes bcrypt costs up to %d (each check of a higher cost takes a core for seconds to hours, for any user name a client sends); hash the password again, e.g. htpasswd -nbBC 10 USER PASSWORD",
		strings.Join(high, ", "), MaxBcryptCost)
}

// writeTemp writes b to a new file in dir, readable by its owner only,
// and returns its path.
func writeTemp(dir string, b []byte) (string, error) {
	f, err := os.CreateTemp(dir, "web-*.yml")
	if err != nil {
		return "", err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// install makes s the snapshot at path, atomically: the toolkit, reading
// path at every request and handshake, sees the old file or the new one,
// whole.
func (s *snapshot) install(dir, path string) error {
	tmp, err := writeTemp(dir, s.yaml)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
