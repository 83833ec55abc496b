// Package testcert makes certificates for tests of the /metrics server's
// TLS: a CA, a server certificate for 127.0.0.1, client certificates with
// subject alternative names, each parsed and as PEM, with new P-256 keys,
// valid for an hour either side of now.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"
)

// KeyPair is a certificate and its key, parsed and as PEM.
type KeyPair struct {
	Cert            *x509.Certificate
	Key             *ecdsa.PrivateKey
	CertPEM, KeyPEM []byte
}

// TLS is the pair as crypto/tls takes it (a client's certificate).
func (k *KeyPair) TLS(t testing.TB) tls.Certificate {
	t.Helper()
	c, err := tls.X509KeyPair(k.CertPEM, k.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Issue signs tmpl with parent's key (itself when parent is nil), with a
// new key and a random serial number.
func Issue(t testing.TB, tmpl *x509.Certificate, parent *KeyPair) *KeyPair {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if tmpl.SerialNumber, err = rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64)); err != nil {
		t.Fatal(err)
	}
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.Cert, parent.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &KeyPair{
		Cert:    cert,
		Key:     key,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}
}

// NewCA is a self-signed certificate authority.
func NewCA(t testing.TB, name string) *KeyPair {
	return Issue(t, &x509.Certificate{
		Subject:               pkix.Name{CommonName: name},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}, nil)
}

// Server is a certificate for 127.0.0.1 signed by ca.
func Server(t testing.TB, ca *KeyPair) *KeyPair {
	return Issue(t, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "bondtop test server"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, ca)
}

// Client is a client certificate signed by ca carrying sans: each a DNS
// name, an IP address, an e-mail address or a URI, by its look.
func Client(t testing.TB, ca *KeyPair, sans ...string) *KeyPair {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "scraper"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	for _, s := range sans {
		if ip := net.ParseIP(s); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if strings.Contains(s, "://") {
			u, err := url.Parse(s)
			if err != nil {
				t.Fatal(err)
			}
			tmpl.URIs = append(tmpl.URIs, u)
		} else if strings.Contains(s, "@") {
			tmpl.EmailAddresses = append(tmpl.EmailAddresses, s)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, s)
		}
	}
	return Issue(t, tmpl, ca)
}
