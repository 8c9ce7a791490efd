// Package digestmd5 is the client side of SASL DIGEST-MD5 (RFC 2831) as
// ZooKeeper's Java client speaks it with a JAAS DigestLoginModule: service
// "zookeeper", server name "zk-sasl-md5", authentication only (qop=auth, no
// integrity or confidentiality layer), no initial response.
//
// A Client is one exchange; it implements zk.SASLExchange. Its Next method
// returns the empty first token, then the digest-response to the server's
// challenge, then checks the server's rspauth and reports done.
package digestmd5

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// ZooKeeper's fixed names for DIGEST-MD5 (its SecurityUtils.createSaslClient
// passes them to the JDK's SASL client).
const (
	Service    = "zookeeper"
	ServerName = "zk-sasl-md5"
)

// nc is the nonce count of the one and only response of an exchange.
const nc = "00000001"

// Client is one DIGEST-MD5 exchange. It is not safe for concurrent use and
// not reusable: make one per connection with New.
type Client struct {
	username, password string
	digestURI          string
	newCnonce          func() (string, error)

	step   int    // messages received so far
	rspHex string // the rspauth the server must send
}

// New returns an exchange authenticating username with password.
func New(username, password string) *Client {
	return &Client{
		username:  username,
		password:  password,
		digestURI: Service + "/" + ServerName,
		newCnonce: randomCnonce,
	}
}

// randomCnonce returns 128 random bits, base64-encoded without padding (so
// it needs no quoting).
func randomCnonce() (string, error) {
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("cnonce: %w", err)
	}
	return base64.RawStdEncoding.EncodeToString(raw[:]), nil
}

// Next implements zk.SASLExchange: challenge is the server's last token
// (nil before the first message).
func (c *Client) Next(challenge []byte) (response []byte, done bool, err error) {
	c.step++
	switch c.step {
	case 1:
		// DIGEST-MD5 has no initial response: the server speaks first,
		// prompted by an empty token.
		return []byte{}, false, nil
	case 2:
		ch, err := parseChallenge(challenge)
		if err != nil {
			return nil, false, fmt.Errorf("DIGEST-MD5: bad server challenge: %w", err)
		}
		resp, err := c.respond(ch)
		if err != nil {
			return nil, false, fmt.Errorf("DIGEST-MD5: %w", err)
		}
		return resp, false, nil
	case 3:
		if err := c.verify(challenge); err != nil {
			return nil, false, fmt.Errorf("DIGEST-MD5: %w", err)
		}
		return nil, true, nil
	}
	return nil, false, errors.New("DIGEST-MD5: exchange already complete")
}

// respond builds the digest-response to ch (RFC 2831 section 2.1.2) and
// remembers the rspauth the server must answer with.
func (c *Client) respond(ch *challenge) ([]byte, error) {
	if !ch.hasAuth {
		return nil, fmt.Errorf("server offers qop %q but not \"auth\"; integrity and "+
			"confidentiality layers are not supported", strings.Join(ch.qops, ","))
	}
	realm := ""
	if len(ch.realms) > 0 {
		realm = ch.realms[0]
	}
	cnonce, err := c.newCnonce()
	if err != nil {
		return nil, err
	}

	user, err := encodeField("username", c.username, ch.utf8)
	if err != nil {
		return nil, err
	}
	realmBytes, err := encodeField("realm", realm, ch.utf8)
	if err != nil {
		return nil, err
	}
	pass, err := encodeField("password", c.password, ch.utf8)
	if err != nil {
		return nil, err
	}
	ha1 := sessionKey(user, realmBytes, pass, ch.nonce, cnonce)
	resp := responseValue(ha1, ch.nonce, cnonce, "AUTHENTICATE:"+c.digestURI)
	c.rspHex = responseValue(ha1, ch.nonce, cnonce, ":"+c.digestURI)

	var b strings.Builder
	if ch.utf8 {
		b.WriteString("charset=utf-8,")
	}
	b.WriteString("username=" + quote(c.username))
	if len(ch.realms) > 0 {
		b.WriteString(",realm=" + quote(realm))
	}
	b.WriteString(",nonce=" + quote(ch.nonce))
	b.WriteString(",nc=" + nc)
	b.WriteString(",cnonce=" + quote(cnonce))
	b.WriteString(",digest-uri=" + quote(c.digestURI))
	b.WriteString(",response=" + resp)
	b.WriteString(",qop=auth")
	return []byte(b.String()), nil
}

// verify checks the server's response-auth (RFC 2831 section 2.1.3).
func (c *Client) verify(token []byte) error {
	ds, err := parseDirectives(string(token))
	if err != nil {
		return fmt.Errorf("bad server response-auth: %w", err)
	}
	got := ""
	for _, d := range ds {
		if d.name == "rspauth" {
			if got != "" {
				return errors.New("server sent rspauth twice")
			}
			got = d.value
		}
	}
	if got == "" {
		return errors.New("server's final message has no rspauth")
	}
	if subtle.ConstantTimeCompare([]byte(strings.ToLower(got)), []byte(c.rspHex)) != 1 {
		return errors.New("server's rspauth does not match: the server does not know the password")
	}
	return nil
}

// encodeField returns the bytes of s hashed into A1: ISO 8859-1 when every
// character fits (as RFC 2831 requires even with charset=utf-8), else UTF-8,
// which needs the server's charset=utf-8.
func encodeField(what, s string, utf8OK bool) ([]byte, error) {
	if !utf8.ValidString(s) {
		return nil, fmt.Errorf("%s is not valid UTF-8", what)
	}
	latin := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			if !utf8OK {
				return nil, fmt.Errorf("%s has characters outside ISO 8859-1 and the server did not offer charset=utf-8", what)
			}
			return []byte(s), nil
		}
		latin = append(latin, byte(r))
	}
	return latin, nil
}

// sessionKey is H(A1) for md5-sess without authzid:
// H( H(username:realm:password) : nonce : cnonce ).
func sessionKey(user, realm, pass []byte, nonce, cnonce string) []byte {
	inner := md5.Sum(bytes.Join([][]byte{user, realm, pass}, []byte(":")))
	h := md5.New()
	h.Write(inner[:])
	io.WriteString(h, ":"+nonce+":"+cnonce)
	return h.Sum(nil)
}

// responseValue is HEX(KD(HEX(H(A1)), nonce:nc:cnonce:auth:HEX(H(A2)))) for
// qop=auth, the response directive with a2 = "AUTHENTICATE:"+digest-uri and
// rspauth with a2 = ":"+digest-uri.
func responseValue(ha1 []byte, nonce, cnonce, a2 string) string {
	ha2 := md5.Sum([]byte(a2))
	kd := md5.Sum([]byte(hex.EncodeToString(ha1) + ":" + nonce + ":" + nc + ":" + cnonce +
		":auth:" + hex.EncodeToString(ha2[:])))
	return hex.EncodeToString(kd[:])
}
