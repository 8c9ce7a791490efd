package zktls

import (
	"bytes"
	"fmt"
	"os"
	"strings"
)

// Store types, as ZooKeeper names them.
const (
	typeJKS    = "JKS"
	typePEM    = "PEM"
	typePKCS12 = "PKCS12"
)

// extensionType is the store type of a file extension ZooKeeper recognises
// (exactly, case and all), or "".
func extensionType(ext string) string {
	switch ext {
	case ".jks":
		return typeJKS
	case ".pem":
		return typePEM
	case ".p12":
		return typePKCS12
	}
	return ""
}

// storeType is the type of st: its Type in any case, or else the type its
// file extension implies.
func storeType(prop string, st Store) (string, error) {
	if st.Type != "" {
		switch t := strings.ToUpper(st.Type); t {
		case typeJKS, typePEM, typePKCS12:
			return t, nil
		case "BCFKS":
			return "", fmt.Errorf("zktls: %s.type %s is not supported (use PKCS12, JKS or PEM)", prop, st.Type)
		default:
			return "", fmt.Errorf("zktls: %s.type %q is not a store type (PKCS12, JKS or PEM)", prop, st.Type)
		}
	}
	if i := strings.LastIndexByte(st.Location, '.'); i >= 0 {
		if t := extensionType(st.Location[i:]); t != "" {
			return t, nil
		}
	}
	return "", fmt.Errorf("zktls: %s.location %s: cannot tell the store type from the file name "+
		"(ZooKeeper knows .jks, .pem and .p12); set %s.type", prop, st.Location, prop)
}

// password is the store's password: the contents of PasswordPath when set
// (less one trailing newline), else Password.
func password(prop string, st Store) (string, error) {
	if st.PasswordPath == "" {
		return st.Password, nil
	}
	b, err := os.ReadFile(st.PasswordPath)
	if err != nil {
		return "", fmt.Errorf("zktls: %s.passwordPath: cannot read the password file: %v", prop, err)
	}
	return string(bytes.TrimSuffix(b, []byte("\n"))), nil
}

// readStore reads the store's file, its type and its password.
func readStore(prop string, st Store) (data []byte, typ, pass string, err error) {
	if typ, err = storeType(prop, st); err != nil {
		return nil, "", "", err
	}
	if pass, err = password(prop, st); err != nil {
		return nil, "", "", err
	}
	if data, err = os.ReadFile(st.Location); err != nil {
		return nil, "", "", fmt.Errorf("zktls: %s.location: cannot read the store: %v", prop, err)
	}
	return data, typ, pass, nil
}

// jksMagic starts every JKS file.
const jksMagic = "\xfe\xed\xfe\xed"

// binaryFormat is the format a JKS or PKCS12 store's bytes are really in:
// Java 9 and later load either file whichever of the two types is named.
// A file in neither format (PEM, say) keeps the named type, whose decoder
// then reports it.
func binaryFormat(typ string, data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte(jksMagic)):
		return typeJKS
	case len(data) > 0 && data[0] == 0x30: // a DER SEQUENCE: PKCS#12
		return typePKCS12
	}
	return typ
}
