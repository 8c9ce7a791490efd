package clientconfig

import "strings"

// The properties of a ZooKeeper client configuration file that the sidecar
// acts on (names as in ZooKeeper's ZKClientConfig and its X509 settings).
const (
	keySecure        = "zookeeper.client.secure"
	keySASLClient    = "zookeeper.sasl.client"
	keySASLSection   = "zookeeper.sasl.clientconfig"
	keyCnxnSocket    = "zookeeper.clientCnxnSocket"
	keySSLPrefix     = "zookeeper.ssl."
	keyKeyStore      = "zookeeper.ssl.keyStore."
	keyTrustStore    = "zookeeper.ssl.trustStore."
	keyProtocol      = "zookeeper.ssl.protocol"
	keyProtocols     = "zookeeper.ssl.enabledProtocols"
	keyCipherSuites  = "zookeeper.ssl.ciphersuites"
	keyHostnameCheck = "zookeeper.ssl.hostnameVerification"

	// DefaultSection is the JAAS section ZooKeeper's client reads when
	// zookeeper.sasl.clientconfig is not set.
	DefaultSection = "Client"

	// JAASProperty is the JVM system property naming the JAAS file. It is
	// not a ZooKeeper client property: ZooKeeper reads it from the JVM's
	// system properties only, never from a client properties file.
	JAASProperty = "java.security.auth.login.config"
)

// handling says what the sidecar does with one property.
type handling int

const (
	// honoured properties configure the connection.
	honoured handling = iota
	// noEffect properties are accepted and change nothing for this client,
	// for the reason given; they are listed at start.
	noEffect
	// onlyFalse properties are booleans the sidecar accepts when false; true
	// asks for something it does not do, and is refused.
	onlyFalse
	// refused properties stop the start whatever their value.
	refused
)

type propertyRule struct {
	how handling
	why string
}

const kerberosOnly = "used by Kerberos (GSSAPI) only; no effect with DIGEST-MD5"

// rules holds every property the sidecar knows. A property it does not name
// is refused when it is a near miss of one the sidecar acts on, and
// otherwise accepted without effect, as ZooKeeper's Java client accepts it
// (see unknownProperty).
var rules = map[string]propertyRule{
	keySecure:      {honoured, ""},
	keySASLClient:  {honoured, ""},
	keySASLSection: {honoured, ""},
	keyCnxnSocket:  {noEffect, "chooses the Java client's socket class; the sidecar speaks TLS whenever " + keySecure + " is true"},

	keyKeyStore + "location":       {honoured, ""},
	keyKeyStore + "password":       {honoured, ""},
	keyKeyStore + "passwordPath":   {honoured, ""},
	keyKeyStore + "type":           {honoured, ""},
	keyTrustStore + "location":     {honoured, ""},
	keyTrustStore + "password":     {honoured, ""},
	keyTrustStore + "passwordPath": {honoured, ""},
	keyTrustStore + "type":         {honoured, ""},
	keyProtocol:                    {honoured, ""},
	keyProtocols:                   {honoured, ""},
	keyCipherSuites:                {honoured, ""},
	keyHostnameCheck:               {honoured, ""},

	"jute.maxbuffer":            {noEffect, "Fluss replaces it with zookeeper.client.max-buffer-size"},
	"zookeeper.request.timeout": {noEffect, "the sidecar bounds every request by its own deadline"},

	"zookeeper.sasl.client.username":                      {noEffect, kerberosOnly},
	"zookeeper.sasl.client.canonicalize.hostname":         {noEffect, kerberosOnly},
	"zookeeper.sasl.client.allowReverseDnsLookup":         {noEffect, kerberosOnly},
	"zookeeper.server.realm":                              {noEffect, kerberosOnly},
	"zookeeper.server.principal":                          {noEffect, kerberosOnly},
	"zookeeper.kinit":                                     {noEffect, kerberosOnly},
	"sun.security.jgss.native":                            {noEffect, kerberosOnly},
	"zookeeper.shuffleDnsResponse":                        {noEffect, "orders the Java client's DNS answers; the sidecar dials each host of zookeeper.address"},
	"zookeeper.hostProvider.dnsSrvRefreshIntervalSeconds": {noEffect, "for the Java client's DNS SRV addresses, which zookeeper.address does not use"},

	keySSLPrefix + "clientAuth":                      {noEffect, "a server setting"},
	keySSLPrefix + "clientHostnameVerification":      {noEffect, "a server setting"},
	keySSLPrefix + "handshakeDetectionTimeoutMillis": {noEffect, "a server setting"},
	keySSLPrefix + "authProvider":                    {noEffect, "a server setting"},
	keySSLPrefix + "sslProvider":                     {noEffect, "chooses Java's TLS engine; the sidecar uses Go's crypto/tls"},
	"zookeeper.fips-mode":                            {noEffect, "chooses Java's trust manager; the sidecar verifies chains and names with Go's crypto/tls"},

	"zookeeper.disableAutoWatchReset":       {onlyFalse, "the sidecar sets its watches again after every reconnect and relies on them"},
	keySSLPrefix + "crl":                    {onlyFalse, "certificate revocation lists are not checked by the sidecar"},
	keySSLPrefix + "ocsp":                   {onlyFalse, "OCSP is not checked by the sidecar"},
	keySSLPrefix + "allowReverseDnsLookup":  {onlyFalse, "the sidecar checks the server's name against the address it dialled, never a reverse lookup"},
	keySSLPrefix + "context.supplier.class": {refused, "it names a Java class; give the key and trust stores instead"},
}

// isTLSKey reports a property that only matters with TLS on.
func isTLSKey(k string) bool {
	return strings.HasPrefix(k, keySSLPrefix) && rules[k].how == honoured
}
