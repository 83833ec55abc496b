package webconfig

import (
	"crypto/tls"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/bondtop/bondtop/internal/testcert"
)

// writeFile writes content to dir/name, creating directories.
func writeFile(t testing.TB, dir, name string, content []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, content, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// hash is the bcrypt hash of password, at the lowest cost (tests only).
func hash(t testing.TB, password string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

// fixture is a directory with what the configs of the tests name, by
// relative paths: tls/server.crt and tls/server.key (for 127.0.0.1,
// signed by ca), tls/ca.crt (ca, as client_ca_file), tls/other.crt and
// tls/other.key (a pair that is not server.crt's key's), tls/empty.pem.
type fixture struct {
	dir    string
	ca     *testcert.KeyPair
	server *testcert.KeyPair
}

func newFixture(t testing.TB) *fixture {
	f := &fixture{dir: t.TempDir(), ca: testcert.NewCA(t, "bondtop test CA")}
	f.server = testcert.Server(t, f.ca)
	other := testcert.Server(t, f.ca)
	writeFile(t, f.dir, "tls/server.crt", f.server.CertPEM)
	writeFile(t, f.dir, "tls/server.key", f.server.KeyPEM)
	writeFile(t, f.dir, "tls/ca.crt", f.ca.CertPEM)
	writeFile(t, f.dir, "tls/other.crt", other.CertPEM)
	writeFile(t, f.dir, "tls/other.key", other.KeyPEM)
	writeFile(t, f.dir, "tls/empty.pem", []byte("no PEM here\n"))
	return f
}

// config writes a web config file into the fixture's directory.
func (f *fixture) config(t testing.TB, content string) string {
	return writeFile(t, f.dir, "web.yml", []byte(content))
}

const tlsFiles = "tls_server_config:\n  cert_file: tls/server.crt\n  key_file: tls/server.key\n"

// TestLoad: every file a server could not use is refused with a message
// that says why; those it can use load, with what they asked.
func TestLoad(t *testing.T) {
	f := newFixture(t)
	h := hash(t, "s3cret")
	indent := func(s string) string { return "    " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n    ") }
	for _, c := range []struct {
		name, content string
		want          string             // an error's substring; "" accepts
		check         func(*Config) bool // of an accepted file
	}{
		{"empty file", "", "", func(c *Config) bool { return !c.TLSEnabled() && len(c.users) == 0 && c.http2 }},
		{"comments only", "# nothing yet\n", "", func(c *Config) bool { return !c.TLSEnabled() }},
		{"basic auth alone", "basic_auth_users:\n  prometheus: " + h + "\n", "", func(c *Config) bool {
			return !c.TLSEnabled() && len(c.users) == 1 && c.users[0].name == "prometheus"
		}},
		{"TLS with defaults", tlsFiles, "", func(c *Config) bool {
			return c.tls.MinVersion == tls.VersionTLS12 && c.tls.MaxVersion == tls.VersionTLS13 &&
				c.tls.ClientAuth == tls.NoClientCert && c.http2 && len(c.tls.Certificates) == 1
		}},
		{"TLS, absolute paths", "tls_server_config:\n  cert_file: " + filepath.Join(f.dir, "tls/server.crt") +
			"\n  key_file: " + filepath.Join(f.dir, "tls/server.key") + "\n", "", (*Config).TLSEnabled},
		{"inline cert and key", "tls_server_config:\n  cert: |\n" + indent(string(f.server.CertPEM)) +
			"\n  key: |\n" + indent(string(f.server.KeyPEM)) + "\n", "", (*Config).TLSEnabled},
		{"empty TLS section", "tls_server_config: {}\n", "", func(c *Config) bool { return !c.TLSEnabled() }},
		{"every key", tlsFiles + `  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: tls/ca.crt
  client_allowed_sans: [scraper.example]
  min_version: TLS13
  max_version: TLS13
  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256]
  curve_preferences: [X25519, CurveP256]
  prefer_server_cipher_suites: false
http_server_config:
  http2: false
  headers:
    X-Frame-Options: deny
    Content-Security-Policy: "default-src 'none'"
    X-Content-Type-Options: ""
rate_limit:
  interval: 2s
  burst: 5
basic_auth_users:
  b: ` + h + "\n  a: " + h + "\n", "", func(c *Config) bool {
			return c.tls.MinVersion == tls.VersionTLS13 && c.tls.ClientAuth == tls.RequireAndVerifyClientCert &&
				c.tls.ClientCAs != nil && c.tls.VerifyConnection != nil &&
				slices.Equal(c.tls.CipherSuites, []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}) &&
				slices.Equal(c.tls.CurvePreferences, []tls.CurveID{tls.X25519, tls.CurveP256}) &&
				!c.http2 && c.rateInterval == 2*time.Second && c.rateBurst == 5 &&
				len(c.users) == 2 && c.users[0].name == "a" &&
				slices.Equal(c.headers, [][2]string{{"Content-Security-Policy", "default-src 'none'"}, {"X-Frame-Options", "deny"}})
		}},
		{"old name RequireClientCert", tlsFiles + "  client_auth_type: RequireClientCert\n", "", func(c *Config) bool {
			return c.tls.ClientAuth == tls.RequireAnyClientCert
		}},
		{"interval 0: no limit", "rate_limit:\n  interval: 0\n  burst: 0\n", "", func(c *Config) bool { return c.rateInterval == 0 }},
		{"interval in ns", "rate_limit:\n  interval: 1000000000\n  burst: 1\n", "", func(c *Config) bool { return c.rateInterval == time.Second }},

		{"not YAML", "tls_server_config: [\n", "yaml", nil},
		{"not a mapping", "just words\n", "cannot unmarshal", nil},
		{"unknown top key", "tls_config:\n  cert_file: a\n", "tls_config", nil},
		{"unknown TLS key", "tls_server_config:\n  cert_fil: tls/server.crt\n  key_file: tls/server.key\n", "cert_fil", nil},
		{"unknown HTTP key", "http_server_config:\n  http3: true\n", "http3", nil},
		{"repeated key", "basic_auth_users:\n  a: " + h + "\n  a: " + h + "\n", "already defined", nil},
		{"two documents", "basic_auth_users: {}\n---\nbasic_auth_users: {}\n", "more than one document", nil},
		{"plain password", "basic_auth_users:\n  prometheus: s3cret\n", "bcrypt", nil},
		{"empty password", "basic_auth_users:\n  prometheus:\n", "bcrypt", nil},
		{"key without cert", "tls_server_config:\n  key_file: tls/server.key\n", "no cert_file", nil},
		{"absent key without cert", "tls_server_config:\n  key_file: a.key\n", "no cert_file", nil},
		{"cert without key", "tls_server_config:\n  cert_file: tls/server.crt\n", "no key_file", nil},
		{"certificate absent", "tls_server_config:\n  cert_file: absent.crt\n  key_file: absent.key\n", "absent.crt", nil},
		{"key absent", "tls_server_config:\n  cert_file: tls/server.crt\n  key_file: absent.key\n", "absent.key", nil},
		{"key of another certificate", "tls_server_config:\n  cert_file: tls/server.crt\n  key_file: tls/other.key\n", "tls/other.key", nil},
		{"cert not PEM", "tls_server_config:\n  cert_file: tls/empty.pem\n  key_file: tls/server.key\n", "empty.pem", nil},
		{"cert is a directory", "tls_server_config:\n  cert_file: tls\n  key_file: tls/server.key\n", "not a regular file", nil},
		{"cert and cert_file", tlsFiles + "  cert: x\n", "both cert and cert_file", nil},
		{"bad client_auth_type", tlsFiles + "  client_auth_type: Always\n", "client_auth_type", nil},
		{"client CA without client auth", tlsFiles + "  client_ca_file: tls/ca.crt\n", "client_auth_type", nil},
		{"verification without a CA", tlsFiles + "  client_auth_type: RequireAndVerifyClientCert\n", "client_ca_file", nil},
		{"client CA absent", tlsFiles + "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: absent-ca.crt\n", "absent-ca.crt", nil},
		{"client CA not PEM", tlsFiles + "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: tls/empty.pem\n", "no PEM certificate", nil},
		{"SANs unverified", tlsFiles + "  client_auth_type: RequireAnyClientCert\n  client_allowed_sans: [a]\n", "client_allowed_sans", nil},
		{"TLS options without a certificate", "tls_server_config:\n  min_version: TLS13\n", "no cert_file", nil},
		{"bad min_version", tlsFiles + "  min_version: TLS1.3\n", "min_version", nil},
		{"min above max", tlsFiles + "  min_version: TLS13\n  max_version: TLS12\n", "above max_version", nil},
		{"default min above max", tlsFiles + "  max_version: TLS11\n", "min_version TLS12 is above max_version TLS11", nil},
		{"unknown cipher", tlsFiles + "  cipher_suites: [TLS_RSA_WITH_RC4_128_SHA]\n", "TLS_RSA_WITH_RC4_128_SHA", nil},
		{"unknown curve", tlsFiles + "  curve_preferences: [P256]\n", "P256", nil},
		{"header not allowed", "http_server_config:\n  headers:\n    Server: bondtop\n", `"Server" cannot be set`, nil},
		{"header value not allowed", "http_server_config:\n  headers:\n    X-Frame-Options: allow-from\n", "allow-from", nil},
		{"header with a control character", "http_server_config:\n  headers:\n    X-XSS-Protection: \"0\\r\\nSet-Cookie: a=b\"\n", "control character", nil},
		{"http2 not a boolean", "http_server_config:\n  http2: sometimes\n", "sometimes", nil},
		{"negative interval", "rate_limit:\n  interval: -1s\n  burst: 1\n", "negative", nil},
		{"interval not a duration", "rate_limit:\n  interval: often\n  burst: 1\n", "often", nil},
		{"burst 0 with an interval", "rate_limit:\n  interval: 1s\n", "burst 0", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Load(f.config(t, c.content))
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v\n%s", err, c.content)
			case c.want == "" && !c.check(cfg):
				t.Fatalf("loaded, but not as written: %+v\n%s", cfg, c.content)
			case c.want != "" && err == nil:
				t.Fatalf("accepted, want an error with %q\n%s", c.want, c.content)
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Fatalf("error %q does not say %q", err, c.want)
			}
		})
	}
	if _, err := Load(filepath.Join(f.dir, "absent.yml")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a missing file: %v", err)
	}
	if _, err := Load(os.DevNull); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("%s: %v, want it refused as not a regular file", os.DevNull, err)
	}
}

// TestLoadSecretsNotShown: an error about a password or an inline key
// does not repeat it (it ends up in logs).
func TestLoadSecretsNotShown(t *testing.T) {
	f := newFixture(t)
	other := testcert.Server(t, f.ca)
	for _, content := range []string{
		"basic_auth_users:\n  prometheus: hunter2-plaintext\n",
		"tls_server_config:\n  cert_file: tls/server.crt\n  key: |\n    " +
			strings.ReplaceAll(strings.TrimSpace(string(other.KeyPEM)), "\n", "\n    ") + "\n",
	} {
		_, err := Load(f.config(t, content))
		if err == nil {
			t.Fatalf("accepted:\n%s", content)
		}
		for _, secret := range []string{"hunter2", strings.Split(string(other.KeyPEM), "\n")[1]} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q shows the secret", err)
			}
		}
	}
}

// FuzzLoad: no file makes Load panic, and whatever it accepts is within
// what the format allows, so that a server never applies a value it did
// not check.
func FuzzLoad(f *testing.F) {
	fx := newFixture(f)
	h := hash(f, "s3cret")
	for _, seed := range []string{
		"",
		tlsFiles,
		tlsFiles + "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: tls/ca.crt\n  client_allowed_sans: [a.example, 10.0.0.1]\n",
		tlsFiles + "  min_version: TLS13\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n  curve_preferences: [X25519]\n",
		"http_server_config:\n  http2: false\n  headers:\n    X-Frame-Options: sameorigin\n",
		"rate_limit:\n  interval: 1s\n  burst: 3\n",
		"basic_auth_users:\n  prometheus: " + h + "\n",
		"tls_server_config: [\n",
	} {
		f.Add([]byte(seed))
	}
	versions := slices.Collect(maps.Values(tlsVersions))
	curveIDs := slices.Collect(maps.Values(curves))
	f.Fuzz(func(t *testing.T, data []byte) {
		tmp, err := os.CreateTemp(fx.dir, "web*.yml")
		if err != nil {
			t.Fatal(err)
		}
		defer os.Remove(tmp.Name())
		if _, err := tmp.Write(data); err != nil {
			t.Fatal(err)
		}
		tmp.Close()
		c, err := Load(tmp.Name())
		if err != nil {
			return
		}
		for _, u := range c.users {
			if _, err := bcrypt.Cost(u.hash); err != nil {
				t.Errorf("user %q accepted with a hash that is not bcrypt", u.name)
			}
		}
		for _, h := range c.headers {
			allowed, ok := extraHeaders[h[0]]
			if !ok || len(allowed) > 0 && !slices.Contains(allowed, h[1]) {
				t.Errorf("header %q: %q accepted", h[0], h[1])
			}
		}
		if c.rateInterval < 0 || c.rateBurst < 0 || c.rateInterval > 0 && c.rateBurst == 0 {
			t.Errorf("rate_limit %v, %d accepted", c.rateInterval, c.rateBurst)
		}
		if c.tls == nil {
			return
		}
		if !slices.Contains(versions, c.tls.MinVersion) || !slices.Contains(versions, c.tls.MaxVersion) || c.tls.MinVersion > c.tls.MaxVersion {
			t.Errorf("versions %#x..%#x accepted", c.tls.MinVersion, c.tls.MaxVersion)
		}
		switch a := c.tls.ClientAuth; {
		case a < tls.NoClientCert || a > tls.RequireAndVerifyClientCert:
			t.Errorf("client auth %v accepted", a)
		case a >= tls.VerifyClientCertIfGiven && c.tls.ClientCAs == nil:
			t.Errorf("client auth %v without client CAs accepted", a)
		case a < tls.VerifyClientCertIfGiven && c.tls.VerifyConnection != nil:
			t.Errorf("client_allowed_sans accepted with client auth %v, which verifies nothing", a)
		}
		for _, id := range c.tls.CipherSuites {
			if !slices.ContainsFunc(tls.CipherSuites(), func(cs *tls.CipherSuite) bool { return cs.ID == id }) {
				t.Errorf("cipher suite %#x accepted", id)
			}
		}
		for _, id := range c.tls.CurvePreferences {
			if !slices.Contains(curveIDs, id) {
				t.Errorf("curve %v accepted", id)
			}
		}
		if len(c.tls.Certificates) != 1 {
			t.Errorf("%d certificates", len(c.tls.Certificates))
		}
	})
}
