package webguard

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/exporter-toolkit/web"
)

// TestSameVerdictAsTheToolkit: every web config file the exporter
// toolkit accepts (node_exporter's --web.config.file) bondtop accepts, and
// every one it refuses bondtop refuses; the weak ones are named in
// warnings. The toolkit's own web.Validate is the judge.
func TestSameVerdictAsTheToolkit(t *testing.T) {
	p := newPKI(t)
	tlsBase := "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
	for _, c := range []struct {
		name, content, warning string
	}{
		{"empty", "", ""},
		{"TLS", tlsBase, ""},
		{"TLS and users", p.tlsUsers(), ""},
		{"users without TLS", fmt.Sprintf("basic_auth_users:\n  %s: %s\n", user, p.hash), "without TLS"},
		{"client CA with NoClientCert", tlsBase + "  client_ca_file: ca.crt\n  client_auth_type: NoClientCert\n", ""},
		{"client CA with RequestClientCert", tlsBase + "  client_ca_file: ca.crt\n  client_auth_type: RequestClientCert\n", "without a certificate is let in"},
		{"VerifyClientCertIfGiven without a CA", tlsBase + "  client_auth_type: VerifyClientCertIfGiven\n", "public CAs"},
		{"client_allowed_sans unverified", tlsBase + "  client_auth_type: RequireAnyClientCert\n  client_allowed_sans: [scraper.example]\n", "nobody verifies"},
		{"verified client certificates", tlsBase + "  client_ca_file: ca.crt\n  client_auth_type: RequireAndVerifyClientCert\n  client_allowed_sans: [scraper.example]\n", ""},
		{"rate_limit burst 0", "rate_limit:\n  interval: 1s\n  burst: 0\n", "burst 0"},
		{"rate limit", "rate_limit:\n  interval: 100ms\n  burst: 5\n", ""},
		{"headers", "http_server_config:\n  http2: false\n  headers:\n    X-Frame-Options: deny\n", ""},
		{"TLS 1.0", tlsBase + "  min_version: TLS10\n", "known weaknesses"},
		{"inline certificate", "tls_server_config:\n  cert: |\n" + indent(string(p.ca.CertPEM)) + "  key_file: server.key\n", ""},
		{"bad header value", "http_server_config:\n  headers:\n    X-Frame-Options: allow\n", ""},
		{"unknown key", "tls_server_config:\n  cert_fil: server.crt\n", ""},
		{"cert without key", "tls_server_config:\n  cert_file: server.crt\n", ""},
		{"absent certificate", "tls_server_config:\n  cert_file: absent.crt\n  key_file: server.key\n", ""},
		{"password not hashed", "basic_auth_users:\n  prometheus: plain\n", ""},
		{"unknown client auth", tlsBase + "  client_auth_type: Sometimes\n", ""},
		{"not a mapping", "- a\n- b\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := p.write(t, strings.ReplaceAll(c.name, " ", "_")+".yml", c.content)
			want := web.Validate(path)
			_, warnings, got := Check(path)
			if (got == nil) != (want == nil) {
				t.Fatalf("bondtop says %v, the toolkit %v", got, want)
			}
			joined := strings.Join(warnings, "\n")
			if c.warning != "" && !strings.Contains(joined, c.warning) {
				t.Errorf("warnings %q do not say %q", joined, c.warning)
			}
			if c.warning == "" && joined != "" && want == nil {
				t.Errorf("unexpected warnings %q", joined)
			}
		})
	}
}

func indent(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		b.WriteString("    " + line)
	}
	return b.String()
}

// TestBcryptCostBound: a hash above MaxBcryptCost is refused with a
// message that says which user and what to do, before any comparison
// could run (a cost-31 hash is some 30 hours of a core per check).
func TestBcryptCostBound(t *testing.T) {
	p := newPKI(t)
	// The cost is a field of the hash: a cost-31 hash needs no 30 hours
	// to make.
	high := "$2a$31$" + p.hash[len("$2a$04$"):]
	path := p.write(t, "high.yml", fmt.Sprintf("basic_auth_users:\n  ok: %s\n  slow: %s\n", p.hash, high))
	if err := web.Validate(path); err != nil {
		t.Fatalf("the toolkit refuses the file too (%v): the test proves nothing", err)
	}
	_, _, err := Check(path)
	if err == nil || !strings.Contains(err.Error(), `"slow" (cost 31)`) || !strings.Contains(err.Error(), "up to 12") {
		t.Fatalf("cost 31: %v", err)
	}
	twelve := "$2a$12$" + p.hash[len("$2a$04$"):]
	if _, _, err := Check(p.write(t, "twelve.yml", fmt.Sprintf("basic_auth_users:\n  ok: %s\n", twelve))); err != nil {
		t.Fatalf("cost 12 refused: %v", err)
	}
}
