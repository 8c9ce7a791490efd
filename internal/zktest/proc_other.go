//go:build !unix

package zktest

import (
	"errors"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr { return nil }

func signalGroup(int, syscall.Signal) error {
	return errors.New("zktest: process groups are not supported on this platform")
}
