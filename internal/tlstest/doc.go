// Package tlstest is a test kit for TLS to ZooKeeper: it makes, at test
// time and with Go's crypto, a certificate authority, a server certificate
// for 127.0.0.1 and localhost, a client certificate, a second unrelated
// authority and a server certificate with a wrong name, and writes each as
// PEM, PKCS12 and JKS key stores and trust stores (one password, also kept
// in a password file) into the test's temporary directory.
//
// It also runs Java's keytool to write stores the Java way, and starts a
// TLS-only ZooKeeper from the kit's stores (StartZooKeeper), with a
// go-zookeeper session helper (Session) for the client side. It is for
// tests only.
package tlstest
