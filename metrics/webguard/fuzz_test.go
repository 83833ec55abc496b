package webguard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/exporter-toolkit/web"
)

// FuzzCheck feeds any text as a web config file: Check never panics, and
// what it accepts the toolkit accepts, and the other way round (files
// that name no certificate file; those are TestSameVerdictAsTheToolkit's).
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		"",
		"basic_auth_users:\n  a: $2a$04$0123456789012345678901uQ0vQ1r0bIvGJqvl3Zk9Dq1lq3yC0eG\n",
		"rate_limit:\n  interval: 1s\n  burst: 0\n",
		"http_server_config:\n  http2: false\n  headers:\n    X-Frame-Options: deny\n",
		"tls_server_config:\n  cert: x\n  key: y\n",
		"tls_server_config: [\n",
		"a: &a [*a, *a]\n",
		"basic_auth_users:\n  a: $2a$31$0123456789012345678901uQ0vQ1r0bIvGJqvl3Zk9Dq1lq3yC0eG\n",
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, content string) {
		if strings.Contains(content, "_file") || strings.Contains(content, "$2a$1") || strings.Contains(content, "$2a$2") || strings.Contains(content, "$2a$3") ||
			strings.Contains(content, "$2b$") || strings.Contains(content, "$2y$") {
			t.Skip() // files named, or bcrypt costs above the bound: other tests
		}
		path := filepath.Join(dir, "web.yml")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, err := Check(path)
		want := web.Validate(path)
		if (err == nil) != (want == nil) {
			t.Fatalf("bondtop says %v, the toolkit %v, for %q", err, want, content)
		}
	})
}
