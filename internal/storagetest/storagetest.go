// Package storagetest starts the object store emulators the tests run,
// each on a loopback port: gofakes3 (S3) and fake-gcs-server (GCS) in
// process, Azurite (Azure Blob) as a child process installed by
// scripts/install-deps.sh. It is for tests only.
package storagetest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/fsouza/fake-gcs-server/fakestorage"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/fluss-sidecar/fluss-sidecar/internal/syncbuf"
)

// StartS3 runs gofakes3 in process with the given buckets and returns its
// endpoint URL and backend; it stops when the test ends.
func StartS3(tb testing.TB, buckets ...string) (string, *s3mem.Backend) {
	tb.Helper()
	mem := s3mem.New()
	for _, b := range buckets {
		if err := mem.CreateBucket(b); err != nil {
			tb.Fatal(err)
		}
	}
	srv := httptest.NewServer(gofakes3.New(mem).Server()) // 127.0.0.1
	tb.Cleanup(srv.Close)
	return srv.URL, mem
}

// StartGCS runs fake-gcs-server in process with the given buckets and
// returns its root URL (the value of fs.gs.storage.root.url) and server;
// it stops when the test ends.
func StartGCS(tb testing.TB, buckets ...string) (string, *fakestorage.Server) {
	tb.Helper()
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", Port: 0})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Stop)
	for _, b := range buckets {
		srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: b})
	}
	return srv.URL() + "/", srv
}

// Azurite's well-known development account (public, documented by Azure
// for the emulator).
const (
	AzuriteAccount = "devstoreaccount1"
	AzuriteKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

var (
	azuriteOnce     sync.Once
	azuriteEndpoint string
	azuriteErr      error
	azuriteMu       sync.Mutex
	azuriteCmd      *exec.Cmd
	azuriteExited   chan struct{}
)

// StartAzurite runs one Azurite blob server per test binary, on a loopback
// port, in memory, without telemetry, and returns its blob endpoint
// (http://127.0.0.1:port/devstoreaccount1) with the given containers
// created. It installs Azurite through scripts/install-deps.sh when it is
// missing. Call StopAzurite from TestMain. Under -short it skips the test
// (SkipIfShort).
func StartAzurite(tb testing.TB, containers ...string) string {
	tb.Helper()
	SkipIfShort(tb)
	azuriteOnce.Do(func() { azuriteEndpoint, azuriteErr = runAzurite() })
	if azuriteErr != nil {
		tb.Fatal(azuriteErr)
	}
	cred, err := azblob.NewSharedKeyCredential(AzuriteAccount, AzuriteKey)
	if err != nil {
		tb.Fatal(err)
	}
	client, err := azblob.NewClientWithSharedKeyCredential(azuriteEndpoint+"/", cred, nil)
	if err != nil {
		tb.Fatal(err)
	}
	for _, c := range containers {
		if _, err := client.CreateContainer(context.Background(), c, nil); err != nil && !strings.Contains(err.Error(), "ContainerAlreadyExists") {
			tb.Fatal(err)
		}
	}
	return azuriteEndpoint
}

// moduleRoot is the directory holding go.mod, found upwards from the
// working directory (a package's directory under go test).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

func runAzurite() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(root, ".deps/node/node_modules/.bin/azurite-blob")
	if _, err := os.Stat(bin); err != nil {
		out, ierr := exec.Command(filepath.Join(root, "scripts/install-deps.sh")).CombinedOutput()
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("azurite missing after scripts/install-deps.sh (%v):\n%s", ierr, out)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	var logs syncbuf.Buffer
	cmd := exec.Command(bin, "--blobHost", "127.0.0.1", "--blobPort", strconv.Itoa(port),
		"--inMemoryPersistence", "--disableTelemetry", "--skipApiVersionCheck", "--loose", "--silent")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	azuriteMu.Lock()
	azuriteCmd, azuriteExited = cmd, exited
	azuriteMu.Unlock()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	// Ready when Azurite itself answers (another process could hold the
	// port if it was taken between our probe and Azurite's bind).
	client := &http.Client{Timeout: 2 * time.Second}
	for deadline := time.Now().Add(60 * time.Second); ; {
		if resp, err := client.Get("http://" + addr + "/" + AzuriteAccount + "?comp=list"); err == nil {
			resp.Body.Close()
			if strings.HasPrefix(resp.Header.Get("Server"), "Azurite") {
				break
			}
			StopAzurite()
			return "", fmt.Errorf("%s answers, but it is not Azurite (Server %q)", addr, resp.Header.Get("Server"))
		}
		select {
		case <-exited:
			return "", fmt.Errorf("azurite exited:\n%s", logs.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			StopAzurite()
			return "", fmt.Errorf("azurite did not listen on %s:\n%s", addr, logs.String())
		}
	}
	return "http://" + addr + "/" + AzuriteAccount, nil
}

// StopAzurite ends the Azurite process StartAzurite started, if any.
func StopAzurite() {
	azuriteMu.Lock()
	defer azuriteMu.Unlock()
	if azuriteCmd != nil && azuriteCmd.Process != nil {
		syscall.Kill(-azuriteCmd.Process.Pid, syscall.SIGKILL)
		<-azuriteExited
		azuriteCmd = nil
	}
}

// SkipIfShort skips tb under go test -short (make check), which runs no
// emulator process (Azurite runs on node; StartS3 and StartGCS are in
// process and run). Without -short it does nothing: an emulator that
// cannot start fails the test.
func SkipIfShort(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("storagetest: needs an emulator process (Azurite on node); not run under -short")
	}
}
