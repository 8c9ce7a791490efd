package clientconfig

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

// jaasLine is the start of the no-effect entry of a
// java.security.auth.login.config in the file.
const jaasLine = JAASProperty + " (ZooKeeper takes the JAAS file from the JVM option -D" + JAASProperty + " only, never from this file; "

// acceptedCases hold properties the sidecar does not know and accepts, as
// ZooKeeper's Java client does. In props, $JAAS is the JAAS file of the
// JVM option and $OTHER another JAAS file, whose Client section is alice's.
var acceptedCases = []struct {
	name     string
	props    string
	jvmJAAS  bool     // the JAAS file is given, as the JVM option; else none is
	noEffect []string // the entries of Settings.NoEffect, sorted
	user     string   // the SASL user, "" when SASL is off
}{
	{"JAAS file in the file, the same as the JVM option's", "java.security.auth.login.config=$JAAS\n", true,
		[]string{jaasLine + "the sidecar uses that same file, $JAAS, from env.java.opts.all)"}, "bob"},
	{"JAAS file in the file, not the JVM option's", "java.security.auth.login.config=$OTHER\nzookeeper.sasl.clientconfig=Client\n", true,
		[]string{jaasLine + "the sidecar uses JAAS file $JAAS, not the one named here, from env.java.opts.all)"}, "bob"},
	{"JAAS file in the file only", "java.security.auth.login.config=$JAAS\n", false,
		[]string{jaasLine + "the sidecar uses no JAAS file)"}, ""},
	{"Kerberos debug switch", "sun.security.krb5.debug=true\n", true,
		[]string{"sun.security.krb5.debug (" + ignoredByZooKeeper + ")"}, "bob"},
	{"other programs' keys", "log4j.rootLogger=INFO, console\nfluss.client.id=job-1\n", true,
		[]string{"fluss.client.id (" + ignoredByZooKeeper + ")", "log4j.rootLogger (" + ignoredByZooKeeper + ")"}, "bob"},
	{"server settings", "zookeeper.ssl.quorum.keyStore.location=/etc/zk/quorum.p12\nzookeeper.authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider\n", true,
		[]string{"zookeeper.authProvider.x509 (" + ignoredByZooKeeper + ")", "zookeeper.ssl.quorum.keyStore.location (" + ignoredByZooKeeper + ")"}, "bob"},
	{"value not expanded", "custom.secret=${env:NOT_SET}\n", true,
		[]string{"custom.secret (" + ignoredByZooKeeper + ")"}, "bob"},
}

// nearMissCases are misspellings of properties the sidecar reads: refused,
// naming the property meant.
var nearMissCases = []struct {
	name, props, meant string
}{
	{"letter dropped", "zookeeper.sasl.clent=true\n", "zookeeper.sasl.client"},
	{"prefix misspelt", "zookeper.client.secure=true\n", "zookeeper.client.secure"},
	{"neighbours swapped", "zookeeper.ssl.trustStore.lcoation=/etc/zk/trust.jks\n", "zookeeper.ssl.trustStore.location"},
	{"refused-when-true switch", "zookeeper.ssl.ocps=true\n", "zookeeper.ssl.ocsp"},
	{"case slip", "zookeeper.sasl.clientConfig=Other\n", "zookeeper.sasl.clientconfig"},
	{"case slips everywhere", "Zookeeper.Client.Secure=true\n", "zookeeper.client.secure"},
	{"case and a letter", "zookeeper.ssl.keystore.locaton=/etc/zk/client.p12\n", "zookeeper.ssl.keyStore.location"},
}

// unknownKit writes the JAAS files of acceptedCases and expands their
// placeholders.
type unknownKit struct {
	jaas, other string
}

func newUnknownKit(t *testing.T) unknownKit {
	dir := t.TempDir()
	return unknownKit{
		jaas:  write(t, dir, "jaas.conf", digestJAAS),
		other: write(t, dir, "other-jaas.conf", `Client { org.apache.zookeeper.server.auth.DigestLoginModule required username="alice" password="a"; };`),
	}
}

func (k unknownKit) expand(s string) string {
	return strings.NewReplacer("$JAAS", k.jaas, "$OTHER", k.other).Replace(s)
}

func TestLoadUnknownAccepted(t *testing.T) {
	t.Parallel()
	kit := newUnknownKit(t)
	for _, tc := range acceptedCases {
		t.Run(tc.name, func(t *testing.T) {
			opts := Options{Expand: testExpand()}
			if tc.jvmJAAS {
				opts.JAASPath, opts.JAASFrom = kit.jaas, "env.java.opts.all"
			}
			s, err := Load(write(t, t.TempDir(), "zk.properties", kit.expand(tc.props)), opts)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]string, len(tc.noEffect))
			for i, e := range tc.noEffect {
				want[i] = kit.expand(e)
			}
			if fmt.Sprint(s.NoEffect) != fmt.Sprint(want) {
				t.Fatalf("no-effect entries\n%q\nwant\n%q", s.NoEffect, want)
			}
			switch {
			case tc.user == "" && s.SASL != nil:
				t.Fatalf("SASL on as %q from %s: the file's JAAS file was used", s.SASL.Username, s.SASL.JAASPath)
			case tc.user == "" && s.SASLStatus != "off (no JAAS file is given)":
				t.Fatalf("SASL status %q", s.SASLStatus)
			case tc.user != "" && (s.SASL == nil || s.SASL.Username != tc.user || s.SASL.JAASPath != kit.jaas):
				t.Fatalf("SASL %+v, want %s from %s", s.SASL, tc.user, kit.jaas)
			}
		})
	}
}

func TestLoadNearMissRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range nearMissCases {
		t.Run(tc.name, func(t *testing.T) {
			path := write(t, t.TempDir(), "zk.properties", "# the coordinator's\n"+tc.props)
			key, _, _ := strings.Cut(tc.props, "=")
			_, err := Load(path, Options{})
			want := fmt.Sprintf("%s: line 2: property %s is not a ZooKeeper client property the sidecar knows; did you mean %s?", path, key, tc.meant)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("got %v, want an error containing %q", err, want)
			}
			if caseOnly := strings.EqualFold(key, tc.meant); caseOnly != strings.Contains(err.Error(), "names are case-sensitive") {
				t.Fatalf("%q: says case-sensitive %v, want %v", err, !caseOnly, caseOnly)
			}
		})
	}
}

// TestZooKeeperPropertiesAccepted checks that no property of ZooKeeper 3.8
// (testdata/zookeeper-3.8-properties.txt) counts as a near miss: a file
// holding any of them, as a coordinator's may, is not refused for its name.
func TestZooKeeperPropertiesAccepted(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/zookeeper-3.8-properties.txt")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		name := strings.TrimSpace(sc.Text())
		if name == "" || strings.HasPrefix(name, "#") {
			continue
		}
		n++
		if _, known := rules[name]; known {
			continue
		}
		if near := nearMiss(name); near != "" {
			t.Errorf("ZooKeeper's property %s is taken for a misspelling of %s", name, near)
		}
	}
	if n < 150 {
		t.Fatalf("%d names, want ZooKeeper's whole list", n)
	}
}

func TestEditDistance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b  string
		limit int
		want  int
	}{
		{"zookeeper", "zookeeper", 3, 0},
		{"abc", "acb", 3, 1},   // a swap
		{"abc", "ab", 3, 1},    // a deletion
		{"ab", "abc", 3, 1},    // an insertion
		{"abc", "xbc", 3, 1},   // a substitution
		{"abcd", "badc", 3, 2}, // two swaps
		{"kitten", "sitting", 5, 3},
		{"kitten", "sitting", 3, 3}, // capped at the limit
		{"kitten", "sitting", 2, 2},
		{"a", strings.Repeat("a", 1<<20), 3, 3}, // not compared
		{"", "ab", 3, 2},
	} {
		if got := editDistance(tc.a, tc.b, tc.limit); got != tc.want {
			t.Errorf("editDistance(%q, %q, %d) = %d, want %d", tc.a, tc.b, tc.limit, got, tc.want)
		}
	}
}

// TestUnknownPropertiesAsZooKeeperReadsThem loads every file of
// acceptedCases and nearMissCases with ZooKeeper's own ZKClientConfig
// (testdata/DumpZKClientConfig.java on ZooKeeper's jars): it accepts each
// one, takes the JAAS file from the JVM's system property whatever the
// file says, and for a misspelling holds no value for the property meant,
// which is the setting the sidecar refuses to lose in silence.
func TestUnknownPropertiesAsZooKeeperReadsThem(t *testing.T) {
	t.Parallel()
	zktest.SkipIfShort(t)
	java, classpath, err := zktest.Java()
	if err != nil {
		t.Fatalf("ZooKeeper's jars and java are needed to compare with ZKClientConfig (make test installs them): %v", err)
	}
	kit := newUnknownKit(t)
	jvmJAAS := write(t, t.TempDir(), "jvm-jaas.conf", digestJAAS)
	dir := t.TempDir()
	var paths, keys []string
	for i, tc := range acceptedCases {
		paths = append(paths, write(t, dir, fmt.Sprintf("accepted%02d.properties", i), kit.expand(tc.props)))
	}
	for i, tc := range nearMissCases {
		paths = append(paths, write(t, dir, fmt.Sprintf("nearmiss%02d.properties", i), tc.props))
		key, _, _ := strings.Cut(tc.props, "=")
		keys = append(keys, key, tc.meant)
	}
	cmd := exec.Command(java, append([]string{"-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp", classpath,
		"-D" + JAASProperty + "=" + jvmJAAS, "-Dkeys=" + strings.Join(keys, ","),
		"testdata/DumpZKClientConfig.java"}, paths...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("java: %v\n%s%s", err, out, stderr.Bytes())
	}
	javaSays := strings.Split(strings.TrimSpace(string(out)), "== ")
	if len(javaSays) != len(paths)+1 {
		t.Fatalf("java printed %d files, want %d:\n%s", len(javaSays)-1, len(paths), out)
	}
	for i, path := range paths {
		says := "\n" + javaSays[i+1] + "\n"
		if !strings.HasPrefix(says, "\n"+path+"\n") || strings.Contains(says, "\nerror ") {
			t.Fatalf("ZKClientConfig did not load %s:\n%s", path, says)
		}
		if !strings.Contains(says, "\njaas="+jvmJAAS+"\n") {
			t.Errorf("ZKClientConfig took another JAAS file than the JVM's %s for %s:\n%s", jvmJAAS, path, says)
		}
		if j := i - len(acceptedCases); j >= 0 {
			tc := nearMissCases[j]
			key, value, _ := strings.Cut(strings.TrimSpace(tc.props), "=")
			if !strings.Contains(says, "\n"+key+"="+value+"\n") || !strings.Contains(says, "\n"+tc.meant+"=-\n") {
				t.Errorf("%s: ZKClientConfig should hold %s=%s and nothing for %s:\n%s", tc.name, key, value, tc.meant, says)
			}
		}
	}
}

// TestJAASFileInPropertiesNotRead checks that a JAAS file named in the
// properties file is never read, even when it is the only one.
func TestJAASFileInPropertiesNotRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	props := write(t, dir, "zk.properties", JAASProperty+"="+filepath.Join(dir, "absent.conf")+"\n")
	s, err := Load(props, Options{})
	if err != nil || s.SASL != nil || len(s.NoEffect) != 1 || !strings.HasPrefix(s.NoEffect[0], jaasLine) {
		t.Fatalf("got %+v, %v: want the file's JAAS path accepted without effect and never opened", s, err)
	}
}
