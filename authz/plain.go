package authz

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"unicode/utf8"
)

// PlainToken is a decoded SASL/PLAIN initial response (RFC 4616).
type PlainToken struct {
	AuthzID  string
	User     string
	Password string
}

// ParsePlainToken decodes "authzid NUL user NUL password" strictly: exactly
// two NUL bytes, valid UTF-8, a non-empty user and password, and an authzid
// that is empty or equal to the user (Fluss refuses acting as someone
// else).
func ParsePlainToken(token []byte) (PlainToken, error) {
	if bytes.Count(token, []byte{0}) != 2 {
		return PlainToken{}, errors.New("a PLAIN token must be authzid NUL user NUL password")
	}
	if !utf8.Valid(token) {
		return PlainToken{}, errors.New("a PLAIN token must be UTF-8")
	}
	parts := bytes.SplitN(token, []byte{0}, 3)
	t := PlainToken{AuthzID: string(parts[0]), User: string(parts[1]), Password: string(parts[2])}
	if t.User == "" {
		return PlainToken{}, errors.New("the PLAIN user name is empty")
	}
	if t.Password == "" {
		return PlainToken{}, errors.New("the PLAIN password is empty")
	}
	if t.AuthzID != "" && t.AuthzID != t.User {
		return PlainToken{}, errors.New("the PLAIN authorization id must be empty or equal to the user name")
	}
	return t, nil
}

// Bytes encodes t as a PLAIN initial response: authzid NUL user NUL
// password. A client logging in as itself leaves AuthzID empty.
func (t PlainToken) Bytes() []byte {
	b := make([]byte, 0, len(t.AuthzID)+len(t.User)+len(t.Password)+2)
	b = append(append(b, t.AuthzID...), 0)
	b = append(append(b, t.User...), 0)
	return append(b, t.Password...)
}

// Credentials holds PLAIN users and their passwords. The zero value has no
// users. It is read-only after construction.
type Credentials struct {
	digests map[string][sha256.Size]byte
	// decoy is compared against when the user does not exist, so that a
	// lookup of an unknown user costs the same as a wrong password.
	decoy [sha256.Size]byte
}

// NewCredentials builds a store from user → password.
func NewCredentials(users map[string]string) *Credentials {
	c := &Credentials{digests: make(map[string][sha256.Size]byte, len(users))}
	for u, p := range users {
		c.digests[u] = sha256.Sum256([]byte(p))
	}
	c.decoy = sha256.Sum256([]byte("\x00no such user\x00"))
	return c
}

// Len is the number of users.
func (c *Credentials) Len() int {
	if c == nil {
		return 0
	}
	return len(c.digests)
}

// Verify reports whether password is user's. Both sides are hashed to a
// fixed length first and compared with crypto/subtle, so neither the
// password's length nor its first wrong byte shows in the time taken; an
// unknown user is compared against a decoy.
func (c *Credentials) Verify(user, password string) bool {
	if c == nil {
		return false
	}
	want, ok := c.digests[user]
	if !ok {
		want = c.decoy
	}
	got := sha256.Sum256([]byte(password))
	match := subtle.ConstantTimeCompare(want[:], got[:]) == 1
	return ok && match
}
