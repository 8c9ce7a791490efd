// Package authz is the sidecar's security: SASL/PLAIN authentication of
// connections (Authenticator) and Fluss's default ACL authorizer
// (Authorizer), both configured from Fluss's own keys and, for ACLs, read
// from the cluster's ZooKeeper (/fluss-acls, kept current through
// /fluss-acl-changes). Decide is the pure decision function; everything
// else feeds it.
//
// Principals are (name, type) pairs: a SASL/PLAIN user is (user, "User"),
// a PLAINTEXT connection is ("ANONYMOUS", "User"). The wire.Session keeps
// the principal name; its type is always "User".
package authz
