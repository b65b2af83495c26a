// Package redact keeps credentials out of everything shardbench prints or writes: one set
// of rules for every database target (cassandra://, mongodb://, mongodb+srv://, or any
// other URL), used by both real backends and the command line. It imports no driver.
//
// A target keeps what a reader needs (scheme, user name, hosts, ports, the names of its
// parameters) and loses its secrets: the password of its user information, the value of
// every parameter whose name suggests a secret (password, tlsCertificateKeyFilePassword,
// apiToken, secretKey, ...), and the secret entries of authMechanismProperties
// (AWS_SESSION_TOKEN:...). Text that may carry a secret some other way (a driver's error
// message quoting the URI or the password it was given) is scrubbed by a Redactor that
// knows the secret values.
package redact

import (
	"net/url"
	"slices"
	"strings"
)

// Mask replaces a secret.
const Mask = "***"

// SecretName reports whether a parameter or property name suggests a secret value.
// Names are compared without case, '_' and '-': tlsCertificateKeyFilePassword, sslpassword,
// AWS_SESSION_TOKEN, api-key, secretAccessKey and sig all do; keyspace, dc, authSource and
// tlsCertificateKeyFile (a path) do not.
func SecretName(name string) bool {
	n := strings.ToLower(name)
	n = strings.NewReplacer("_", "", "-", "", ".", "").Replace(n)
	for _, part := range []string{"pass", "pwd", "secret", "token", "credential", "jwt", "bearer", "signature", "privatekey", "apikey", "accesskey", "sessionkey"} {
		if strings.Contains(n, part) {
			return true
		}
	}
	return n == "sig" || n == "key" || strings.HasSuffix(n, "key") && !strings.HasSuffix(n, "shardkey")
}

// Target returns a database target with its secrets masked. It never fails: a target
// that does not parse as a URL is masked by the same rules, read as loosely as needed.
func Target(s string) string {
	t := split(s)
	var b strings.Builder
	b.WriteString(t.scheme)
	if t.hasUser {
		b.WriteString(t.user)
		if t.hasPass {
			b.WriteString(":" + Mask)
		}
		b.WriteString("@")
	}
	b.WriteString(t.hosts)
	b.WriteString(t.path)
	if t.hasQuery {
		b.WriteString("?")
		for i, p := range t.params {
			if i > 0 {
				b.WriteString(p.sep)
			}
			b.WriteString(p.name)
			if !p.hasValue {
				continue
			}
			b.WriteString("=")
			switch {
			case SecretName(unescape(p.name)):
				b.WriteString(Mask)
			case isProperties(p.name):
				b.WriteString(maskProperties(p.value))
			default:
				b.WriteString(p.value)
			}
		}
	}
	b.WriteString(t.fragment)
	return b.String()
}

// Secrets lists the secret values a target carries (the user's password, secret
// parameters' values, secret properties), as written and unescaped, for a Redactor.
func Secrets(s string) []string {
	t := split(s)
	var out []string
	add := func(v string) {
		out = append(out, v)
		if u := unescape(v); u != v {
			out = append(out, u)
		}
	}
	if t.hasPass {
		add(t.pass)
	}
	for _, p := range t.params {
		switch {
		case !p.hasValue:
		case SecretName(unescape(p.name)):
			add(p.value)
		case isProperties(p.name):
			for _, kv := range strings.Split(unescape(p.value), ",") {
				if k, v, ok := strings.Cut(kv, ":"); ok && SecretName(k) {
					add(v)
				}
			}
		}
	}
	return out
}

// Redactor scrubs known secret values from text. The zero value scrubs nothing; a nil
// *Redactor is ready to use too.
type Redactor struct {
	secrets []string
}

// MinSecret is the shortest secret scrubbed from free text: replacing every "a" of a
// message because a password was "a" would garble it, and a secret that short protects
// nothing. Targets are masked whatever their secrets' length.
const MinSecret = 4

// New makes a Redactor for the secrets of the given targets and any further secret
// values (a password from the environment or a file).
func New(targets []string, secrets ...string) *Redactor {
	r := &Redactor{}
	for _, t := range targets {
		r.Add(Secrets(t)...)
	}
	r.Add(secrets...)
	return r
}

// Add adds secret values to scrub.
func (r *Redactor) Add(secrets ...string) {
	for _, s := range secrets {
		for _, v := range []string{s, url.QueryEscape(s), url.PathEscape(s)} {
			if len(v) >= MinSecret && !slices.Contains(r.secrets, v) {
				r.secrets = append(r.secrets, v)
			}
		}
	}
	// Longest first, so a secret containing another is replaced whole.
	slices.SortFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
}

// Text returns s with every known secret replaced by Mask.
func (r *Redactor) Text(s string) string {
	if r == nil {
		return s
	}
	for _, secret := range r.secrets {
		s = strings.ReplaceAll(s, secret, Mask)
	}
	return s
}

// target is a target split into its parts, each as written.
type target struct {
	scheme           string // "mongodb://", or "" without one
	user, pass       string
	hasUser, hasPass bool
	hosts, path      string
	hasQuery         bool
	params           []param
	fragment         string // with its '#'
}

type param struct {
	sep         string // '&' or ';' before it
	name, value string
	hasValue    bool
}

func split(s string) target {
	var t target
	if i := strings.Index(s, "://"); i >= 0 && !strings.ContainsAny(s[:i], "/?#@") {
		t.scheme, s = s[:i+3], s[i+3:]
	}
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s, t.fragment = s[:i], s[i:]
	}
	rest := s
	query := ""
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		rest, query, t.hasQuery = rest[:i], rest[i+1:], true
	}
	// The user information ends at the last '@' before the path: a password may hold
	// '@' or '/' when it was not escaped.
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		t.hasUser = true
		info := rest[:i]
		rest = rest[i+1:]
		if u, p, ok := strings.Cut(info, ":"); ok {
			t.user, t.pass, t.hasPass = u, p, true
		} else {
			t.user = info
		}
	}
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		t.hosts, t.path = rest[:i], rest[i:]
	} else {
		t.hosts = rest
	}
	if t.hasQuery {
		sep := ""
		for query != "" {
			j := strings.IndexAny(query, "&;")
			item := query
			next := ""
			if j >= 0 {
				item, next = query[:j], query[j:j+1]
				query = query[j+1:]
			} else {
				query = ""
			}
			p := param{sep: sep}
			p.name, p.value, p.hasValue = strings.Cut(item, "=")
			t.params = append(t.params, p)
			sep = next
		}
	}
	return t
}

func isProperties(name string) bool {
	return strings.EqualFold(unescape(name), "authMechanismProperties")
}

// maskProperties masks the secret values of KEY:VALUE,KEY:VALUE (authMechanismProperties).
func maskProperties(v string) string {
	escaped := strings.Contains(v, "%")
	raw := unescape(v)
	parts := strings.Split(raw, ",")
	for i, kv := range parts {
		if k, _, ok := strings.Cut(kv, ":"); ok && SecretName(k) {
			parts[i] = k + ":" + Mask
		}
	}
	out := strings.Join(parts, ",")
	if escaped {
		out = strings.NewReplacer(":", "%3A", ",", "%2C").Replace(out)
	}
	return out
}

func unescape(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}
