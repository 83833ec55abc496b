// Package webconfig owns reading, checking and applying a web config
// file in the Prometheus exporter format (the file every exporter's
// --web.config.file names): TLS with optional client certificates, basic
// auth with bcrypt-hashed passwords, extra response headers and a request
// rate limit, for bondtop's /metrics server.
//
// It replaces github.com/prometheus/exporter-toolkit/web, which brought
// OAuth2, JWT, connection tracing, systemd and vsock support and the whole
// Prometheus client into a program that often runs as root, for what is a
// YAML file, a tls.Config and a password check. The file format and the
// behaviour exporters' users rely on are kept: the same keys and
// defaults, strict YAML, paths relative to the file, and the file read
// again when it changes, so a renewed certificate or a new password needs
// no restart. Where the toolkit accepted a file that protects less than it
// seems to, or cannot work, Load refuses it with the reason: client
// verification without a client CA (crypto/tls would trust every public
// CA), client_allowed_sans on certificates nobody verifies, TLS settings
// without a certificate (served as plain HTTP), a rate limit that refuses
// every request, a minimum TLS version above the maximum.
package webconfig

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	"golang.org/x/crypto/bcrypt"

	"github.com/bondtop/bondtop/internal/filekind"
)

// maxFileSize bounds every file Load reads (the config, certificates,
// keys, client CAs): real ones are a few kilobytes, and a path that names
// something huge must fail rather than fill the memory of a long-running
// process.
const maxFileSize = 1 << 20

// Config is a web config file that Load read and checked, with its
// certificate, key and client CAs loaded: what a server applies.
type Config struct {
	// tls is the server's TLS configuration (certificate, versions, client
	// verification), nil when the file asks for plain HTTP. Handshakes get
	// a clone with the server's ALPN protocols; this one is never modified
	// after Load.
	tls *tls.Config
	// http2 is http_server_config.http2: whether TLS offers HTTP/2.
	http2 bool
	// headers are set on every response, sorted by name.
	headers [][2]string
	// rateInterval and rateBurst are rate_limit: one request per interval
	// over all clients, burst at once; an interval of 0 is no limit.
	rateInterval time.Duration
	rateBurst    int
	// users are basic_auth_users sorted by name; none means no basic auth.
	users []user
}

// user is one basic_auth_users entry.
type user struct {
	name string
	// nameSum is the SHA-256 of the name: comparing sums of a fixed length
	// in constant time tells nothing about a name's length or prefix.
	nameSum [32]byte
	hash    []byte // bcrypt
}

// TLSEnabled reports whether the file asks for TLS (a certificate, key,
// client CA or client_auth_type in tls_server_config): the server then
// serves only HTTPS.
func (c *Config) TLSEnabled() bool { return c.tls != nil }

// fileConfig is the file as written. Pointers tell a section that is
// absent from one that sets nothing but defaults.
type fileConfig struct {
	TLS   *tlsSection       `yaml:"tls_server_config"`
	HTTP  *httpSection      `yaml:"http_server_config"`
	Rate  *rateSection      `yaml:"rate_limit"`
	Users map[string]string `yaml:"basic_auth_users"`
}

type tlsSection struct {
	Cert              string   `yaml:"cert"`
	Key               string   `yaml:"key"`
	ClientCA          string   `yaml:"client_ca"`
	CertFile          string   `yaml:"cert_file"`
	KeyFile           string   `yaml:"key_file"`
	ClientAuthType    string   `yaml:"client_auth_type"`
	ClientCAFile      string   `yaml:"client_ca_file"`
	ClientAllowedSANs []string `yaml:"client_allowed_sans"`
	MinVersion        string   `yaml:"min_version"`
	MaxVersion        string   `yaml:"max_version"`
	CipherSuites      []string `yaml:"cipher_suites"`
	CurvePreferences  []string `yaml:"curve_preferences"`
	// Accepted so that existing files load, and ignored: crypto/tls has
	// chosen the cipher suite itself since Go 1.17.
	PreferServerCipherSuites bool `yaml:"prefer_server_cipher_suites"`
}

type httpSection struct {
	HTTP2   *bool             `yaml:"http2"`
	Headers map[string]string `yaml:"headers"`
}

type rateSection struct {
	Interval duration `yaml:"interval"`
	Burst    int      `yaml:"burst"`
}

// yamlNames puts the file's names for the Go types in yaml.v3's errors:
// "field cert_fil not found in tls_server_config".
var yamlNames = strings.NewReplacer(
	"type webconfig.tlsSection", "tls_server_config",
	"type webconfig.httpSection", "http_server_config",
	"type webconfig.rateSection", "rate_limit",
	"type webconfig.fileConfig", "the top level",
	"webconfig.fileConfig", "a web config (a mapping)",
)

// duration reads "15s" as the toolkit's YAML library did, and a bare
// integer as nanoseconds (so the documented "interval: 0" still turns the
// limit off), which yaml.v3 would refuse for a time.Duration.
type duration time.Duration

// UnmarshalYAML implements yaml.Unmarshaler.
func (d *duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" {
		var ns int64
		if err := n.Decode(&ns); err != nil {
			return err
		}
		*d = duration(ns)
		return nil
	}
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("rate_limit: interval (line %d): %v", n.Line, err)
	}
	*d = duration(v)
	return nil
}

// extraHeaders are the response headers a file may set, with the values
// each accepts where the header has a fixed set (none listed: any value).
// The list is the exporter toolkit's, so that a file means the same to
// every exporter.
var extraHeaders = map[string][]string{
	"Content-Security-Policy":   nil,
	"Strict-Transport-Security": nil,
	"X-Content-Type-Options":    {"nosniff"},
	"X-Frame-Options":           {"deny", "sameorigin"},
	"X-XSS-Protection":          nil,
}

// tlsVersions are min_version's and max_version's values.
var tlsVersions = map[string]uint16{
	"TLS10": tls.VersionTLS10,
	"TLS11": tls.VersionTLS11,
	"TLS12": tls.VersionTLS12,
	"TLS13": tls.VersionTLS13,
}

// curves are curve_preferences' values: the toolkit's four, and the
// hybrid post-quantum exchange Go prefers by default, so a list that
// orders curves need not give it up.
var curves = map[string]tls.CurveID{
	"CurveP256":      tls.CurveP256,
	"CurveP384":      tls.CurveP384,
	"CurveP521":      tls.CurveP521,
	"X25519":         tls.X25519,
	"X25519MLKEM768": tls.X25519MLKEM768,
}

// clientAuthTypes are client_auth_type's values. RequireClientCert is the
// toolkit's old name for RequireAnyClientCert, kept for old files.
var clientAuthTypes = map[string]tls.ClientAuthType{
	"":                           tls.NoClientCert,
	"NoClientCert":               tls.NoClientCert,
	"RequestClientCert":          tls.RequestClientCert,
	"RequireAnyClientCert":       tls.RequireAnyClientCert,
	"RequireClientCert":          tls.RequireAnyClientCert,
	"VerifyClientCertIfGiven":    tls.VerifyClientCertIfGiven,
	"RequireAndVerifyClientCert": tls.RequireAndVerifyClientCert,
}

// Load reads the web config file at path and checks everything a server
// would use: the YAML (strictly: an unknown or repeated key is an error),
// the bcrypt hashes, the headers, the rate limit, and for TLS the
// certificate and key (loaded and matched), the client CAs and every
// enumerated value. Relative paths in the file are relative to its
// directory. An empty file is valid: plain HTTP for anyone.
func Load(path string) (*Config, error) {
	c, _, err := load(path)
	return c, err
}

// load is Load, also returning the state of every file it read, taken
// before reading it (even when reading failed), so that a server can tell
// whether anything changed since.
func load(path string) (*Config, []stamp, error) {
	r := &reader{}
	c, err := r.config(path)
	return c, r.stamps, err
}

// reader reads the file and those it names, noting each one's stamp.
type reader struct {
	stamps []stamp
}

// read returns the content of the regular file at path, at most
// maxFileSize bytes. Anything but a regular file is refused: a FIFO or
// a device would block or never end.
func (r *reader) read(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	r.stamps = append(r.stamps, stampOf(path, fi, err))
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file", path, filekind.Of(fi.Mode()))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > maxFileSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxFileSize)
	}
	return b, nil
}

func (r *reader) config(path string) (*Config, error) {
	b, err := r.read(path)
	if err != nil {
		return nil, err
	}
	var f fileConfig
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	switch err := dec.Decode(&f); {
	case errors.Is(err, io.EOF):
		// No document at all (empty, or only comments): nothing asked.
	case err != nil:
		return nil, errors.New(yamlNames.Replace(err.Error()))
	default:
		var next yaml.Node
		if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
			return nil, errors.New("yaml: more than one document (a second \"---\"?): only one is read")
		}
	}

	c := &Config{http2: true}
	if c.users, err = checkUsers(f.Users); err != nil {
		return nil, err
	}
	if f.HTTP != nil {
		if f.HTTP.HTTP2 != nil {
			c.http2 = *f.HTTP.HTTP2
		}
		if c.headers, err = checkHeaders(f.HTTP.Headers); err != nil {
			return nil, err
		}
	}
	if f.Rate != nil {
		c.rateInterval, c.rateBurst = time.Duration(f.Rate.Interval), f.Rate.Burst
		switch {
		case c.rateInterval < 0:
			return nil, fmt.Errorf("rate_limit: interval %v is negative", c.rateInterval)
		case c.rateBurst < 0:
			return nil, fmt.Errorf("rate_limit: burst %d is negative", c.rateBurst)
		case c.rateInterval > 0 && c.rateBurst == 0:
			// A token bucket that holds no token refuses every request.
			return nil, errors.New("rate_limit: burst 0 would refuse every request: set burst to 1 or more (or interval to 0 for no limit)")
		}
	}
	if c.tls, err = r.tlsConfig(f.TLS, filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("tls_server_config: %w", err)
	}
	return c, nil
}

// checkUsers checks that every password is a bcrypt hash (a plain
// password would never match, and must not sit in a file as it is).
func checkUsers(users map[string]string) ([]user, error) {
	names := make([]string, 0, len(users))
	for name := range users {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]user, 0, len(users))
	for _, name := range names {
		hash := []byte(users[name])
		if _, err := bcrypt.Cost(hash); err != nil {
			// The value is not quoted: it may be a plain password.
			return nil, fmt.Errorf(`basic_auth_users: %q: the password must be a bcrypt hash (htpasswd -nBC 10 "" | tr -d ':\n' makes one): %v`, name, err)
		}
		out = append(out, user{name: name, nameSum: sha256.Sum256([]byte(name)), hash: hash})
	}
	return out, nil
}

// checkHeaders allows only the headers of extraHeaders, and of those
// with a fixed set of values only one of them. A blank value sets nothing,
// as the format documents ("unset if blank").
func checkHeaders(headers map[string]string) ([][2]string, error) {
	var out [][2]string
	for name, value := range headers {
		allowed, ok := extraHeaders[name]
		if !ok {
			return nil, fmt.Errorf("http_server_config: headers: %q cannot be set (these can: %s)", name, strings.Join(sortedKeys(extraHeaders), ", "))
		}
		if value == "" {
			continue
		}
		if len(allowed) > 0 && !slices.Contains(allowed, value) {
			return nil, fmt.Errorf("http_server_config: headers: %s: %q is not one of %q", name, value, allowed)
		}
		if strings.ContainsFunc(value, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return nil, fmt.Errorf("http_server_config: headers: %s: a control character in %q", name, value)
		}
		out = append(out, [2]string{name, value})
	}
	slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return out, nil
}

// tlsConfig builds the server's TLS configuration from the section, or
// returns nil for plain HTTP. TLS is on when the section names a
// certificate, key, client CA or client_auth_type, as the toolkit decides.
func (r *reader) tlsConfig(s *tlsSection, dir string) (*tls.Config, error) {
	if s == nil {
		return nil, nil
	}
	if s.Cert == "" && s.Key == "" && s.CertFile == "" && s.KeyFile == "" &&
		s.ClientCA == "" && s.ClientCAFile == "" && s.ClientAuthType == "" {
		// The toolkit serves plain HTTP here; a file that sets TLS options
		// without a certificate would then protect nothing while saying
		// otherwise.
		for _, o := range []struct {
			key string
			set bool
		}{
			{"client_allowed_sans", len(s.ClientAllowedSANs) > 0},
			{"min_version", s.MinVersion != ""},
			{"max_version", s.MaxVersion != ""},
			{"cipher_suites", len(s.CipherSuites) > 0},
			{"curve_preferences", len(s.CurvePreferences) > 0},
		} {
			if o.set {
				return nil, fmt.Errorf("%s is set but no cert_file: TLS needs cert_file and key_file", o.key)
			}
		}
		return nil, nil
	}
	join := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	// pem returns an inline value or a file's content, whichever is set.
	pem := func(inline, file, inlineKey, fileKey string) ([]byte, error) {
		switch {
		case inline != "" && file != "":
			return nil, fmt.Errorf("both %s and %s are set: give one", inlineKey, fileKey)
		case file != "":
			b, err := r.read(join(file))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", fileKey, err)
			}
			return b, nil
		}
		return []byte(inline), nil
	}

	switch {
	case s.Cert == "" && s.CertFile == "":
		return nil, errors.New("no cert_file (nor cert): TLS needs a certificate and its key")
	case s.Key == "" && s.KeyFile == "":
		return nil, errors.New("no key_file (nor key): TLS needs a certificate and its key")
	}
	certPEM, err := pem(s.Cert, s.CertFile, "cert", "cert_file")
	if err != nil {
		return nil, err
	}
	keyPEM, err := pem(s.Key, s.KeyFile, "key", "key_file")
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		// Name the files, never the inline key.
		from := "cert and key"
		if s.CertFile != "" || s.KeyFile != "" {
			from = fmt.Sprintf("cert_file %s and key_file %s", join(s.CertFile), join(s.KeyFile))
		}
		return nil, fmt.Errorf("%s: %v", from, err)
	}

	cfg := &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
		MaxVersion:   tls.VersionTLS13,
	}
	for _, v := range []struct {
		key, name string
		to        *uint16
	}{{"min_version", s.MinVersion, &cfg.MinVersion}, {"max_version", s.MaxVersion, &cfg.MaxVersion}} {
		if v.name == "" {
			continue
		}
		id, ok := tlsVersions[v.name]
		if !ok {
			return nil, fmt.Errorf("%s: %q is not one of %s", v.key, v.name, strings.Join(sortedKeys(tlsVersions), ", "))
		}
		*v.to = id
	}
	if cfg.MinVersion > cfg.MaxVersion {
		return nil, fmt.Errorf("min_version %s is above max_version %s: no version is left",
			versionName(cfg.MinVersion), versionName(cfg.MaxVersion))
	}
	for _, name := range s.CipherSuites {
		i := slices.IndexFunc(tls.CipherSuites(), func(cs *tls.CipherSuite) bool { return cs.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("cipher_suites: %q is not a cipher suite crypto/tls offers (tls.CipherSuites)", name)
		}
		cfg.CipherSuites = append(cfg.CipherSuites, tls.CipherSuites()[i].ID)
	}
	for _, name := range s.CurvePreferences {
		id, ok := curves[name]
		if !ok {
			return nil, fmt.Errorf("curve_preferences: %q is not one of %s", name, strings.Join(sortedKeys(curves), ", "))
		}
		cfg.CurvePreferences = append(cfg.CurvePreferences, id)
	}

	auth, ok := clientAuthTypes[s.ClientAuthType]
	if !ok {
		return nil, fmt.Errorf("client_auth_type: %q is not one of %s", s.ClientAuthType, strings.Join(sortedKeys(clientAuthTypes)[1:], ", "))
	}
	cfg.ClientAuth = auth
	caPEM, err := pem(s.ClientCA, s.ClientCAFile, "client_ca", "client_ca_file")
	if err != nil {
		return nil, err
	}
	switch {
	case len(caPEM) > 0 && auth == tls.NoClientCert:
		return nil, errors.New("client CAs are set but client_auth_type asks for no client certificate: set client_auth_type RequireAndVerifyClientCert")
	case len(caPEM) == 0 && auth >= tls.VerifyClientCertIfGiven:
		// crypto/tls would verify against the system's roots: any
		// certificate a public CA signed would pass.
		return nil, fmt.Errorf("client_auth_type %s needs client_ca_file: the CA that signs the clients' certificates", s.ClientAuthType)
	case len(caPEM) > 0:
		cfg.ClientCAs = x509.NewCertPool()
		if !cfg.ClientCAs.AppendCertsFromPEM(caPEM) {
			return nil, errors.New("client CAs: no PEM certificate in client_ca_file (or client_ca)")
		}
	}
	if len(s.ClientAllowedSANs) > 0 {
		if auth < tls.VerifyClientCertIfGiven {
			// A certificate nobody verified can carry any name.
			return nil, errors.New("client_allowed_sans needs client_auth_type RequireAndVerifyClientCert (or VerifyClientCertIfGiven)")
		}
		cfg.VerifyConnection = allowedSANs(slices.Clone(s.ClientAllowedSANs))
	}
	return cfg, nil
}

// allowedSANs returns a tls.Config.VerifyConnection that lets a client
// in only if its verified certificate carries one of the names, exactly
// (DNS, IP, e-mail or URI). VerifyConnection runs after verification, on
// resumed sessions too; with client_allowed_sans a client without a
// certificate does not get in.
func allowedSANs(allowed []string) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
			return errors.New("client_allowed_sans: no verified client certificate")
		}
		leaf := cs.VerifiedChains[0][0]
		names := slices.Concat(leaf.DNSNames, leaf.EmailAddresses)
		for _, ip := range leaf.IPAddresses {
			names = append(names, ip.String())
		}
		for _, u := range leaf.URIs {
			names = append(names, u.String())
		}
		for _, n := range names {
			if slices.Contains(allowed, n) {
				return nil
			}
		}
		return fmt.Errorf("client certificate's SANs %q: none in client_allowed_sans", names)
	}
}

// versionName is the file's name for a TLS version.
func versionName(id uint16) string {
	for name, v := range tlsVersions {
		if v == id {
			return name
		}
	}
	return fmt.Sprintf("0x%04x", id)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
