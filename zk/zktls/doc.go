// Package zktls turns the TLS settings of a ZooKeeper client properties file
// (zookeeper.client.secure, zookeeper.ssl.*) into a *tls.Config, reading
// them the way ZooKeeper 3.8's Java client (X509Util and its key store
// loaders) does, so that one properties file means the same to a Fluss
// coordinator and to the sidecar.
//
// What ZooKeeper 3.8 does, and so Build does:
//
//   - Store type: zookeeper.ssl.*.type, case-insensitive (JKS, PEM, PKCS12;
//     BCFKS is refused here). When it is empty the type comes from the file
//     name's extension, compared case-sensitively: ".jks", ".pem", ".p12".
//     Any other name (".pfx" included) is an error naming the file.
//   - Password: *.passwordPath wins over *.password when both are set; the
//     file is read whole and one trailing line separator ("\n") is dropped.
//     No password means the empty password.
//   - JKS and PKCS12 stores: loaded with the store password; the keys are
//     recovered with the same password. Java 9+ loads a JKS file given type
//     PKCS12 and the other way round (keystore.type.compat), so Build does
//     too, telling the two apart by the JKS magic number.
//   - A key store may hold several keys. Java's key manager chooses, per
//     handshake, a key whose type and issuer the server accepts, preferring
//     certificates that are valid now and allowed for client
//     authentication. Build lists every key (in alias order, with those
//     preferred first) and Go's client takes the first one the server's
//     certificate request accepts. PKCS12 key stores with more than one
//     key are refused (go-pkcs12 reads one).
//   - PEM key store: one file holding the first "... PRIVATE KEY" block and
//     every certificate (the chain, leaf first). The key must be PKCS#8:
//     with a password it must be an encrypted PKCS#8 key ("ENCRYPTED
//     PRIVATE KEY"), without one a plain PKCS#8 key ("PRIVATE KEY").
//     PKCS#1 ("RSA PRIVATE KEY") and SEC 1 ("EC PRIVATE KEY") keys are
//     refused, as ZooKeeper's client refuses them; the error says how to
//     convert them (openssl pkcs8 -topk8).
//   - Encrypted PEM keys: Build reads PBES2 (PBKDF2 with AES, what openssl
//     writes by default) through github.com/youmark/pkcs8, and refuses
//     PBES1 (such as PBE-SHA1-3DES). ZooKeeper 3.8 on Java 17 is the other
//     way round: it fails on PBES2 ("PBES2 SecretKeyFactory not
//     available") and reads PBES1. No encrypted PEM key serves both, so a
//     properties file shared with a Fluss coordinator should use PKCS12,
//     JKS, or a PEM key without a password.
//   - Trust stores: the trusted-certificate entries of a JKS or PKCS12
//     store, or every certificate of a PEM file; key entries are not trust
//     anchors. A trust store with no trusted certificate is an error, as in
//     Java. Without a trust store the system roots are used, as Java uses
//     its cacerts.
//   - Protocol: zookeeper.ssl.protocol, default TLSv1.2 (the 3.8 default);
//     zookeeper.ssl.enabledProtocols, default the protocol alone, and when
//     set it decides. Names are Java's: TLSv1.2 and TLSv1.3, exactly, in
//     the enabled list; the protocol also in any case, and "TLS", which
//     needs an enabled list (ZooKeeper 3.8 would otherwise enable "TLS"
//     itself, which Java refuses). TLSv1 and TLSv1.1 are refused (Java 17
//     disables them).
//   - Cipher suites: zookeeper.ssl.ciphersuites, Java (IANA) names;
//     default ZooKeeper 3.8's list for Java 9+ (ECDHE with AES-GCM, then
//     AES-CBC), less the two AES-256-CBC-SHA384 suites Go does not have.
//     Go always offers all three TLS 1.3 suites, so naming any one of them
//     allows TLS 1.3; a list with none caps the version at TLS 1.2, as it
//     does in Java.
//   - Hostname verification (zookeeper.ssl.hostnameVerification, default
//     true): the server certificate must name the host dialled (the
//     transport sets ServerName). When off, the chain is still verified
//     against the trust store; only the name is not checked.
//
// Where Build is stricter than ZooKeeper 3.8: the key and the first
// certificate of a PEM store must match; every key of a JKS store must open
// with the store password at Build rather than at the handshake; the name
// is checked against the host dialled, where ZooKeeper checks the peer's IP
// address and then its reverse-DNS name, and also when no trust store is
// set (ZooKeeper 3.8 then checks no name).
package zktls
