// Package hdfsblob is a gocloud.dev/blob driver for HDFS, over
// github.com/colinmarc/hdfs/v2 (HDFS's own RPC and data-transfer protocols,
// no JVM). Keys are paths relative to a root directory of the namespace.
//
// It behaves as the local file system driver does where the remote store
// relies on it:
//   - a write goes to a temporary file next to the target
//     ("<name>.<hex nanoseconds>.tmp"), which is renamed over the target once
//     HDFS has completed it, so a reader never sees a partial file under the
//     final name; a write whose context ended before the rename leaves
//     nothing. Its directories are made first, and made again if a
//     concurrent prune removed them before the file was created;
//   - listing with the "/" delimiter reports every directory, empty ones
//     included; FS.RemoveEmptyDir removes one that holds nothing.
//
// Contexts: the client has none. Every call runs on its own goroutine and
// returns when its context ends, with the context's error; the call itself
// is then bounded by the I/O timeout that every NameNode and DataNode
// connection applies to each read and write (Options.IOTimeout), and its
// outcome is unknown. A write given up that way can still complete its
// rename; the file is then named by nothing, and orphan cleanup removes it.
//
// Errors keep HDFS's classes: a missing path matches os.ErrNotExist, a
// refused access os.ErrPermission, an exceeded space or namespace quota
// syscall.EDQUOT, safe mode, a standby NameNode and connection failures
// ErrUnavailable.
package hdfsblob
