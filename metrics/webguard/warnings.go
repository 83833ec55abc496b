package webguard

import (
	"crypto/tls"
	"fmt"
)

// warnings names the settings that protect less than they seem to. The
// toolkit serves them (every exporter does), so bondtop does too, and
// says so at start and at each reload.
func (s *snapshot) warnings() []string {
	c := &s.config
	t := &c.TLSConfig
	var w []string
	if len(c.Users) > 0 && !t.IsEnabled() {
		w = append(w, "basic_auth_users without TLS: passwords cross the network readable by anyone on the path (add tls_server_config)")
	}
	if t.IsEnabled() {
		verifies := t.ClientAuth == "VerifyClientCertIfGiven" || t.ClientAuth == "RequireAndVerifyClientCert"
		hasCA := t.ClientCAs != "" || t.ClientCAsText != ""
		if len(t.ClientAllowedSans) > 0 && !verifies {
			w = append(w, fmt.Sprintf("client_allowed_sans with client_auth_type %q: nobody verifies the certificates, so any client can make one with an allowed SAN (use RequireAndVerifyClientCert and client_ca_file)", orNone(t.ClientAuth)))
		}
		if verifies && !hasCA {
			w = append(w, fmt.Sprintf("client_auth_type %s without client_ca_file: client certificates are verified against the system's public CAs, so any certificate a public CA issued is let in", t.ClientAuth))
		}
		if t.ClientAuth == "VerifyClientCertIfGiven" || t.ClientAuth == "RequestClientCert" {
			w = append(w, fmt.Sprintf("client_auth_type %s: a client without a certificate is let in too", t.ClientAuth))
		}
		if t.MinVersion != 0 && t.MinVersion < tls.VersionTLS12 {
			w = append(w, fmt.Sprintf("min_version %s: TLS versions before 1.2 have known weaknesses", tls.VersionName(uint16(t.MinVersion))))
		}
	}
	if r := c.RateLimiterConfig; r.Interval > 0 && r.Burst <= 0 {
		w = append(w, "rate_limit with burst 0: no request gets through, every one is answered 429 (set burst to 1 or more)")
	}
	return w
}

func orNone(s string) string {
	if s == "" {
		return "NoClientCert"
	}
	return s
}
