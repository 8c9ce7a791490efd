package hdfsblob

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"syscall"

	"github.com/colinmarc/hdfs/v2"
)

// Java exceptions a NameNode answers with, by class.
var (
	quotaExceptions = []string{
		"org.apache.hadoop.hdfs.protocol.DSQuotaExceededException",
		"org.apache.hadoop.hdfs.protocol.NSQuotaExceededException",
		"org.apache.hadoop.hdfs.protocol.QuotaExceededException",
		"org.apache.hadoop.hdfs.protocol.QuotaByStorageTypeExceededException",
	}
	unavailableExceptions = []string{
		"org.apache.hadoop.hdfs.server.namenode.SafeModeException",
		"org.apache.hadoop.ipc.RetriableException",
		"org.apache.hadoop.ipc.StandbyException",
		"org.apache.hadoop.hdfs.server.namenode.NotReplicatedYetException",
	}
	permissionExceptions = []string{
		"org.apache.hadoop.security.AccessControlException",
		"org.apache.hadoop.hdfs.protocol.SnapshotAccessControlException",
	}
)

// classify attaches the class of an HDFS failure to err: syscall.EDQUOT for
// an exceeded quota, os.ErrPermission for a refused access, ErrUnavailable
// for safe mode, a standby NameNode and a failed connection. Missing paths
// already match os.ErrNotExist.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var remote hdfs.Error
	if errors.As(err, &remote) {
		exc := remote.Exception()
		msg := exc
		if first, _, _ := strings.Cut(remote.Message(), "\n"); first != "" {
			msg = first
		}
		switch {
		case slices.Contains(quotaExceptions, exc):
			return fmt.Errorf("%w (%w: %s)", err, syscall.EDQUOT, msg)
		case slices.Contains(permissionExceptions, exc):
			return fmt.Errorf("%w (%w: %s)", err, syscall.EACCES, msg)
		case slices.Contains(unavailableExceptions, exc):
			return fmt.Errorf("%w (%w: %s)", err, ErrUnavailable, msg)
		}
		return fmt.Errorf("%w (%s)", err, msg)
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || strings.Contains(err.Error(), "no available namenodes") {
		if !errors.Is(err, ErrUnavailable) {
			return fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
	}
	return err
}
