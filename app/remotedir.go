package app

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/remote"
)

// The remote directory, where offsets files go, as a Fluss coordinator
// finds it in the same server.yaml:
//   - remote.data.dir when it is set. Fluss's producer offsets code reads
//     no other key (0.9.1 and 1.0 alike), so it wins over remote.data.dirs,
//     which in Fluss 1.0 only places new tables' data;
//   - otherwise the first entry of remote.data.dirs, Fluss 1.0's default
//     remote directory when remote.data.dir is absent.
//
// Every entry of remote.data.dirs must be a path Fluss can parse, as a
// Fluss 1.0 server checks at start; the one used is then opened by
// remotestore.Open like any remote.data.dir.

// readRemoteDir sets RemoteDataDir, RemoteDataDirKey and RemoteDataDirs.
// Embedded mode keeps nothing remote (embeddedSettings refuses both keys).
func readRemoteDir(c *config.Config, s *Settings) error {
	if s.Embedded {
		return nil
	}
	dirs, listed, err := remoteDataDirs(c)
	if err != nil {
		return err
	}
	s.RemoteDataDirs = dirs
	if dir := c.String(KeyRemoteDataDir, ""); dir != "" {
		s.RemoteDataDir, s.RemoteDataDirKey = dir, KeyRemoteDataDir
		return nil
	}
	if len(dirs) > 0 {
		s.RemoteDataDir, s.RemoteDataDirKey = dirs[0], KeyRemoteDataDirs
		return nil
	}
	why := ""
	if listed {
		why = " (" + KeyRemoteDataDirs + " lists no directory)"
	}
	return errors.New("Either '" + KeyRemoteDataDir + "' or '" + KeyRemoteDataDirs + "' must be configured" + why +
		": where the producer offsets files are kept, e.g. file:///var/lib/fluss/remote or s3://bucket/fluss")
}

// remoteDataDirs returns the entries of remote.data.dirs, split as Fluss
// splits a list, each a valid path; listed says the key has a value, even
// one that holds no entry (",").
func remoteDataDirs(c *config.Config) (dirs []string, listed bool, err error) {
	v := c.String(KeyRemoteDataDirs, "")
	if v == "" {
		return nil, false, nil
	}
	if c.FromSequence(KeyRemoteDataDirs) {
		return nil, true, fmt.Errorf("%s is written as a YAML list, which Fluss's server.yaml reader skips (one 'key: value' a line), so a coordinator would not see these directories; "+
			"write them on one line, comma-separated: %s: %s", KeyRemoteDataDirs, KeyRemoteDataDirs, v)
	}
	dirs, err = config.SplitList(v)
	if err != nil {
		return nil, true, wrapKey(KeyRemoteDataDirs, err)
	}
	var errs []error
	for i, d := range dirs {
		if _, err := remote.ParseFsPath(d); err != nil {
			errs = append(errs, fmt.Errorf("%s: the entry at index %d (%q) is not a valid remote path: %w", KeyRemoteDataDirs, i, d, err))
		}
	}
	if len(errs) > 0 {
		return nil, true, errors.Join(errs...)
	}
	return dirs, true, nil
}

// remoteDirSource says, for the start-up line, which key RemoteDataDir
// comes from.
func (s Settings) remoteDirSource() string {
	switch {
	case s.RemoteDataDirKey == KeyRemoteDataDirs:
		return KeyRemoteDataDirs + " (first of " + strconv.Itoa(len(s.RemoteDataDirs)) + ")"
	case len(s.RemoteDataDirs) > 0:
		return KeyRemoteDataDir + " (" + KeyRemoteDataDirs + " is set too: Fluss keeps producer offsets in " + KeyRemoteDataDir + ")"
	default:
		return s.RemoteDataDirKey
	}
}

// remoteDirMismatch is the warning for a remote.data.dir that is not the
// first entry of remote.data.dirs, "" when there is none: Fluss asks for
// remote.data.dir to be that entry, and the sidecar, like Fluss's
// coordinator, keeps producer offsets in remote.data.dir regardless.
func (s Settings) remoteDirMismatch() string {
	if s.RemoteDataDirKey != KeyRemoteDataDir || len(s.RemoteDataDirs) == 0 || samePath(s.RemoteDataDir, s.RemoteDataDirs[0]) {
		return ""
	}
	return fmt.Sprintf("%s (%s) is not the first entry of %s (%s): producer offsets go to %s, where Fluss's coordinator keeps them, while Fluss places new tables under %s; "+
		"make %s the first entry of %s, as Fluss asks", KeyRemoteDataDir, s.RemoteDataDir, KeyRemoteDataDirs, s.RemoteDataDirs[0],
		KeyRemoteDataDir, KeyRemoteDataDirs, KeyRemoteDataDir, KeyRemoteDataDirs)
}

// samePath reports whether a and b name one path once Fluss has
// normalised them.
func samePath(a, b string) bool {
	pa, errA := remote.ParseFsPath(a)
	pb, errB := remote.ParseFsPath(b)
	if errA != nil || errB != nil {
		return a == b
	}
	return pa == pb
}
