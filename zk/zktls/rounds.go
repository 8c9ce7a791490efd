package zktls

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"fmt"
)

// maxKDFRounds is the most key-derivation rounds a store may ask for;
// Java's own PKCS12 key store refuses more than this many. The decoders
// run as many rounds as the file says before they can tell a wrong
// password or a damaged file, so without a bound one damaged count holds
// start-up for hours.
const maxKDFRounds = 5_000_000

var (
	oidPBES2  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2 = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
)

// checkPKCS12Rounds refuses a PKCS12 store whose integrity check asks for
// more than maxKDFRounds. go-pkcs12 checks the integrity before it
// decrypts anything, with the password, so the later counts are reached
// only in a file made with the password. A file that does not parse is
// left to go-pkcs12, whose error names what is wrong.
func checkPKCS12Rounds(data []byte) error {
	var pfx struct {
		Version  int
		AuthSafe asn1.RawValue
		MacData  struct {
			Mac struct {
				Algorithm pkix.AlgorithmIdentifier
				Digest    []byte
			}
			MacSalt    []byte
			Iterations int `asn1:"optional,default:1"`
		} `asn1:"optional"`
	}
	if _, err := asn1.Unmarshal(data, &pfx); err != nil {
		return nil
	}
	return roundsWithin(pfx.MacData.Iterations, "its integrity check")
}

// checkPKCS8Rounds refuses an encrypted PKCS#8 key whose derivation is not
// one Java reads (PBES2 with PBKDF2) or asks for more than maxKDFRounds.
// A key that does not parse is left to the decoder.
func checkPKCS8Rounds(der []byte) error {
	var info struct {
		Algo struct {
			Algorithm  asn1.ObjectIdentifier
			Parameters struct {
				KDF struct {
					Algorithm  asn1.ObjectIdentifier
					Parameters asn1.RawValue
				}
				Scheme asn1.RawValue
			}
		}
		Data []byte
	}
	if _, err := asn1.Unmarshal(der, &info); err != nil || !info.Algo.Algorithm.Equal(oidPBES2) {
		return nil // not PBES2: the decoder says so (PBES1 has its own message)
	}
	if !info.Algo.Parameters.KDF.Algorithm.Equal(oidPBKDF2) {
		return fmt.Errorf("the key is derived with %v, not PBKDF2, which is all Java reads", info.Algo.Parameters.KDF.Algorithm)
	}
	var params struct {
		Salt       []byte
		Iterations int
	}
	if _, err := asn1.Unmarshal(info.Algo.Parameters.KDF.Parameters.FullBytes, &params); err != nil {
		return nil
	}
	return roundsWithin(params.Iterations, "its key derivation")
}

func roundsWithin(n int, what string) error {
	if n > maxKDFRounds || n < 0 {
		return fmt.Errorf("%s asks for %d rounds, more than the %d Java allows", what, n, maxKDFRounds)
	}
	return nil
}
