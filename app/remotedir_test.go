package app

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/config"
)

// TestRemoteDir: where offsets files go, from remote.data.dir and
// remote.data.dirs as a Fluss coordinator reads the same server.yaml, and
// every way of writing remote.data.dirs that Fluss refuses (or would not
// see) refused with the key named.
func TestRemoteDir(t *testing.T) {
	for _, tt := range []struct {
		name string
		yaml string // besides zookeeper.address
		dir  string // the remote directory used
		key  string // the key it came from
		dirs []string
		warn bool   // remote.data.dir is not the first entry of remote.data.dirs
		err  string // substring of the error; "" when it resolves
	}{
		{name: "only remote.data.dir", yaml: "remote.data.dir: s3://a/fluss", dir: "s3://a/fluss", key: KeyRemoteDataDir},
		{name: "only remote.data.dirs: the first entry", yaml: "remote.data.dirs: s3://a/fluss,s3://b/fluss",
			dir: "s3://a/fluss", key: KeyRemoteDataDirs, dirs: []string{"s3://a/fluss", "s3://b/fluss"}},
		{name: "one entry", yaml: "remote.data.dirs: file:///var/lib/fluss/remote",
			dir: "file:///var/lib/fluss/remote", key: KeyRemoteDataDirs, dirs: []string{"file:///var/lib/fluss/remote"}},
		{name: "spaces and a trailing comma", yaml: "remote.data.dirs: '  s3://a/fluss ,  s3://b/fluss ,'",
			dir: "s3://a/fluss", key: KeyRemoteDataDirs, dirs: []string{"s3://a/fluss", "s3://b/fluss"}},
		{name: "an entry quoted for its comma", yaml: `remote.data.dirs: "'s3://a/x,y', s3://b/fluss"`,
			dir: "s3://a/x,y", key: KeyRemoteDataDirs, dirs: []string{"s3://a/x,y", "s3://b/fluss"}},
		{name: "both set, remote.data.dir first in the list", yaml: "remote.data.dir: s3://a/fluss/\nremote.data.dirs: s3://a/fluss, s3://b/fluss",
			dir: "s3://a/fluss/", key: KeyRemoteDataDir, dirs: []string{"s3://a/fluss", "s3://b/fluss"}},
		{name: "both set, remote.data.dir not in the list: it still holds producer offsets",
			yaml: "remote.data.dir: s3://old/fluss\nremote.data.dirs: s3://a/fluss, s3://b/fluss",
			dir:  "s3://old/fluss", key: KeyRemoteDataDir, dirs: []string{"s3://a/fluss", "s3://b/fluss"}, warn: true},
		{name: "both set, the list empty", yaml: "remote.data.dir: s3://a/fluss\nremote.data.dirs: ','", dir: "s3://a/fluss", key: KeyRemoteDataDir},
		{name: "blank remote.data.dirs is unset", yaml: "remote.data.dir: s3://a/fluss\nremote.data.dirs:", dir: "s3://a/fluss", key: KeyRemoteDataDir},
		{name: "strategy and weights change nothing", yaml: "remote.data.dirs: s3://a/f, s3://b/f\nremote.data.dirs.strategy: WEIGHTED_ROUND_ROBIN\nremote.data.dirs.weights: 0,1",
			dir: "s3://a/f", key: KeyRemoteDataDirs, dirs: []string{"s3://a/f", "s3://b/f"}},

		{name: "neither", yaml: "", err: "Either 'remote.data.dir' or 'remote.data.dirs' must be configured: where the producer offsets files are kept"},
		{name: "an empty list and no remote.data.dir", yaml: "remote.data.dirs: ','", err: "Either 'remote.data.dir' or 'remote.data.dirs' must be configured (remote.data.dirs lists no directory)"},
		{name: "an empty entry", yaml: "remote.data.dirs: s3://a/f,,s3://b/f",
			err: `remote.data.dirs: the entry at index 1 ("") is not a valid remote path: fspath: Can not create a Path from an empty string`},
		{name: "a blank entry", yaml: "remote.data.dirs: s3://a/f, ,s3://b/f", err: `the entry at index 1 ("")`},
		{name: "an empty first entry", yaml: "remote.data.dirs: ',,s3://a/f'", err: `the entry at index 0 ("")`},
		{name: "an empty entry beside remote.data.dir", yaml: "remote.data.dir: s3://a/f\nremote.data.dirs: s3://a/f,,", err: `the entry at index 1 ("")`},
		{name: "a bad scheme", yaml: "remote.data.dirs: s3://a/f, 123://b/f", err: `remote.data.dirs: the entry at index 1 ("123://b/f") is not a valid remote path`},
		{name: "a bad entry beside remote.data.dir", yaml: "remote.data.dir: s3://a/f\nremote.data.dirs: s3://a/f, s3:relative", err: "relative path in absolute URI"},
		{name: "an unclosed quote", yaml: `remote.data.dirs: "s3://a/f, 's3://b/f"`, err: "remote.data.dirs: list"},
		{name: "a YAML block list", yaml: "remote.data.dirs:\n  - s3://a/f\n  - s3://b/f",
			err: "remote.data.dirs is written as a YAML list, which Fluss's server.yaml reader skips"},
		{name: "a YAML flow list", yaml: "remote.data.dirs: [s3://a/f, s3://b/f]", err: "write them on one line, comma-separated: remote.data.dirs: s3://a/f,s3://b/f"},
		{name: "a YAML list beside remote.data.dir", yaml: "remote.data.dir: s3://a/f\nremote.data.dirs:\n  - s3://a/f", err: "YAML list"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Parse([]byte("zookeeper.address: 127.0.0.1:2181\n" + tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			s, err := FromConfig(c)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want an error containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.RemoteDataDir != tt.dir || s.RemoteDataDirKey != tt.key || !slices.Equal(s.RemoteDataDirs, tt.dirs) {
				t.Errorf("dir %q from %q, dirs %q; want %q from %q, dirs %q", s.RemoteDataDir, s.RemoteDataDirKey, s.RemoteDataDirs, tt.dir, tt.key, tt.dirs)
			}
			if w := s.remoteDirMismatch(); (w != "") != tt.warn {
				t.Errorf("mismatch warning %q, want one: %v", w, tt.warn)
			}
		})
	}
}

// TestRemoteDirStartupLine: the start-up line names the remote directory
// and the key it came from, never inventing a remote.data.dir in the
// effective configuration; secrets stay redacted; a remote.data.dir that
// is not the list's first entry adds a WARN line.
func TestRemoteDirStartupLine(t *testing.T) {
	for _, tt := range []struct {
		name          string
		kv            map[string]string
		dir, from     string
		effectiveDir  string // the effective configuration's remote.data.dir
		warnSubstring string // "" when no WARN line
	}{
		{name: "remote.data.dir", kv: map[string]string{KeyRemoteDataDir: "s3://a/fluss"},
			dir: "s3://a/fluss", from: "remote.data.dir", effectiveDir: "s3://a/fluss"},
		{name: "remote.data.dirs", kv: map[string]string{KeyRemoteDataDirs: "s3://a/fluss, s3://b/fluss, s3://c/fluss"},
			dir: "s3://a/fluss", from: "remote.data.dirs (first of 3)"},
		{name: "both, the same", kv: map[string]string{KeyRemoteDataDir: "s3://a/fluss", KeyRemoteDataDirs: "s3://a/fluss,s3://b/fluss"},
			dir: "s3://a/fluss", from: "remote.data.dir (remote.data.dirs is set too: Fluss keeps producer offsets in remote.data.dir)", effectiveDir: "s3://a/fluss"},
		{name: "both, different", kv: map[string]string{KeyRemoteDataDir: "s3://old/fluss", KeyRemoteDataDirs: "s3://a/fluss,s3://b/fluss"},
			dir: "s3://old/fluss", from: "remote.data.dir (remote.data.dirs is set too: Fluss keeps producer offsets in remote.data.dir)", effectiveDir: "s3://old/fluss",
			warnSubstring: "remote.data.dir (s3://old/fluss) is not the first entry of remote.data.dirs (s3://a/fluss): producer offsets go to remote.data.dir"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := config.New()
			c.Set(KeyZKAddress, "127.0.0.1:2181")
			c.Set(KeyS3SecretKey, "TOPSECRET")
			c.Set(KeyLogFormat, "json")
			for k, v := range tt.kv {
				c.Set(k, v)
			}
			s, err := FromConfig(c)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			LogStartup(NewLogger("fluss-sidecar", "info", s.Ops.LogFormat, &buf), c, s)
			if strings.Contains(buf.String(), "TOPSECRET") {
				t.Fatalf("secret logged: %s", buf.String())
			}
			lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
			var rec struct {
				Message string            `json:"@message"`
				Dir     string            `json:"remote_dir"`
				From    string            `json:"remote_dir_from"`
				Config  map[string]string `json:"config"`
			}
			if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
				t.Fatalf("not a JSON line: %v\n%s", err, lines[0])
			}
			if rec.Message != "starting fluss-sidecar" || rec.Dir != tt.dir || rec.From != tt.from {
				t.Errorf("start-up line %q: remote_dir %q from %q, want %q from %q", rec.Message, rec.Dir, rec.From, tt.dir, tt.from)
			}
			if got, set := rec.Config[KeyRemoteDataDir]; got != tt.effectiveDir || set != (tt.effectiveDir != "") {
				t.Errorf("effective %s = %q (set: %v), want %q", KeyRemoteDataDir, got, set, tt.effectiveDir)
			}
			if rec.Config[KeyS3SecretKey] != Redacted {
				t.Errorf("effective %s = %q, want it redacted", KeyS3SecretKey, rec.Config[KeyS3SecretKey])
			}
			var warns []string
			for _, l := range lines[1:] {
				var w struct {
					Level   string `json:"@level"`
					Message string `json:"@message"`
				}
				if json.Unmarshal([]byte(l), &w) == nil && w.Level == "warn" {
					warns = append(warns, w.Message)
				}
			}
			if tt.warnSubstring == "" && len(warns) != 0 || tt.warnSubstring != "" && (len(warns) != 1 || !strings.Contains(warns[0], tt.warnSubstring)) {
				t.Errorf("WARN lines %q, want one containing %q", warns, tt.warnSubstring)
			}
		})
	}
}

// TestRealisticServerYAML: a Fluss coordinator's server.yaml that sets only
// remote.data.dirs (with its strategy and weights) resolves: offsets files
// go to the first entry, through that entry's file system keys, and no key
// of the file is taken for a misspelling.
func TestRealisticServerYAML(t *testing.T) {
	c, err := config.Load("testdata/coordinator-remote-data-dirs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := FromConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	if s.RemoteDataDir != "s3://fluss-prod-a/cluster-1" || s.RemoteDataDirKey != KeyRemoteDataDirs || len(s.RemoteDataDirs) != 2 {
		t.Errorf("remote dir %q from %q (dirs %q)", s.RemoteDataDir, s.RemoteDataDirKey, s.RemoteDataDirs)
	}
	if s.S3Endpoint != "https://s3.eu-west-1.amazonaws.com" || s.S3Region != "eu-west-1" || s.S3SecretKey == "" {
		t.Errorf("the S3 keys of the first entry were not read: %q %q", s.S3Endpoint, s.S3Region)
	}
	if s.ZooKeeperRoot != "/fluss-prod" || s.CleanupInterval.Minutes() != 30 {
		t.Errorf("not the file's settings: root %q, cleanup %v", s.ZooKeeperRoot, s.CleanupInterval)
	}
	if w := CheckKeys(c); len(w) != 0 {
		t.Errorf("typo warnings for a Fluss server.yaml: %q", w)
	}
}
