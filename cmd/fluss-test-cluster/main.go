// Command fluss-test-cluster starts and stops an embedded fluss-sidecar
// under the launcher contract of Fluss's client bindings (the program a
// suite names in FLUSS_TEST_CLUSTER_BIN):
//
//	fluss-test-cluster start [--name N] [--sasl] [--port P]
//	fluss-test-cluster stop  [--name N]
//
// start runs an embedded sidecar in its own session, so that it outlives
// the command, waits until it serves, prints
//
//	CLUSTER_JSON: {"bootstrap_servers":"127.0.0.1:P","sasl_bootstrap_servers":null,"control_url":"http://127.0.0.1:C"}
//
// and exits 0. With --sasl the listener on P takes SASL/PLAIN logins of
// admin/admin-secret and alice/alice-secret, bootstrap_servers is a
// PLAINTEXT listener on P+100 and sasl_bootstrap_servers is P. The name
// (default shared-test) keys a folder under $TMPDIR/fluss-test-cluster
// holding the server's state and log; a start of a name already running
// prints the same line again. stop ends the server of that name (checked
// to be this program's server by its process id and command line) and
// removes its folder; stopping a name not running succeeds.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/embedded"
	"github.com/fluss-sidecar/fluss-sidecar/embedded/controlapi"
)

const usage = `usage:
  fluss-test-cluster start [--name N] [--sasl] [--port P]
  fluss-test-cluster stop  [--name N]
`

// childCommand is the hidden command the detached server runs.
const childCommand = "serve-child"

// saslUsers are the users of --sasl, those of Fluss's own test launcher.
var saslUsers = map[string]string{"admin": "admin-secret", "alice": "alice-secret"}

// startTimeout bounds the wait for the server to serve.
const startTimeout = 60 * time.Second

var validName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)

// Cluster is the CLUSTER_JSON line: the contract's keys.
type Cluster struct {
	BootstrapServers     string  `json:"bootstrap_servers"`
	SASLBootstrapServers *string `json:"sasl_bootstrap_servers"`
	ControlURL           string  `json:"control_url"`
}

// State is what a running server writes once it serves: the contract's
// keys, and how to find and check the process.
type State struct {
	Cluster
	PID  int    `json:"pid"`
	Name string `json:"name"`
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("name", "shared-test", "the cluster's name")
	sasl := fs.Bool("sasl", false, "a SASL/PLAIN listener on --port, PLAINTEXT on --port+100")
	port := fs.Int("port", 9123, "the port of bootstrap (SASL with --sasl)")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() > 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	if !validName.MatchString(*name) {
		fmt.Fprintf(stderr, "fluss-test-cluster: name %q: use letters, digits, '.', '_' and '-'\n", *name)
		return 2
	}
	if *port < 1 || *port > 65535-100 {
		fmt.Fprintf(stderr, "fluss-test-cluster: port %d out of range\n", *port)
		return 2
	}
	dir := filepath.Join(os.TempDir(), "fluss-test-cluster", *name)
	switch args[0] {
	case "start":
		return start(dir, *name, *sasl, *port, stdout, stderr)
	case "stop":
		return stop(dir, *name, stderr)
	case childCommand:
		return child(dir, *name, *sasl, *port, stderr)
	}
	fmt.Fprint(stderr, usage)
	return 2
}

func statePath(dir string) string { return filepath.Join(dir, "state.json") }

func readState(dir string) (State, bool) {
	data, err := os.ReadFile(statePath(dir))
	if err != nil {
		return State{}, false
	}
	var s State
	if json.Unmarshal(data, &s) != nil || s.PID <= 0 {
		return State{}, false
	}
	return s, true
}

func printCluster(w io.Writer, s State) {
	line, _ := json.Marshal(s.Cluster)
	fmt.Fprintf(w, "CLUSTER_JSON: %s\n", line)
}

// ours reports whether pid is this program's server for name: alive, with
// our child command and the name on its command line, and its control API
// answering.
func ours(s State, name string) bool {
	if syscall.Kill(s.PID, 0) != nil {
		return false
	}
	if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", s.PID)); err == nil {
		args := strings.Split(string(cmdline), "\x00")
		if !slices.Contains(args, childCommand) || !slices.Contains(args, name) {
			return false
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := (&controlapi.Client{Base: s.ControlURL}).Server(ctx)
	return err == nil
}

func start(dir, name string, sasl bool, port int, stdout, stderr io.Writer) int {
	if s, ok := readState(dir); ok {
		if ours(s, name) {
			fmt.Fprintf(stderr, "fluss-test-cluster: %q is running (pid %d)\n", name, s.PID)
			printCluster(stdout, s)
			return 0
		}
	}
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		fmt.Fprintln(stderr, "fluss-test-cluster:", err)
		return 1
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "fluss-test-cluster:", err)
		return 1
	}
	logFile, err := os.OpenFile(filepath.Join(dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		fmt.Fprintln(stderr, "fluss-test-cluster:", err)
		return 1
	}
	defer logFile.Close()
	args := []string{childCommand, "--name", name, "--port", strconv.Itoa(port)}
	if sasl {
		args = append(args, "--sasl")
	}
	cmd := exec.Command(self, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own session: no signal of this command's terminal or process
	// group reaches it, and it outlives this command.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	fmt.Fprintf(stderr, "Starting fluss-sidecar test cluster %q...\n", name)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(stderr, "fluss-test-cluster:", err)
		return 1
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.NewTimer(startTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			fmt.Fprintf(stderr, "fluss-test-cluster: the server exited: %v\n%s", err, log)
			os.RemoveAll(dir)
			return 1
		case <-deadline.C:
			cmd.Process.Kill()
			fmt.Fprintf(stderr, "fluss-test-cluster: the server did not serve within %s\n", startTimeout)
			return 1
		case <-tick.C:
			if s, ok := readState(dir); ok && s.PID == cmd.Process.Pid {
				fmt.Fprintln(stderr, "Cluster ready.")
				printCluster(stdout, s)
				return 0
			}
		}
	}
}

func stop(dir, name string, stderr io.Writer) int {
	s, ok := readState(dir)
	if !ok {
		fmt.Fprintf(stderr, "fluss-test-cluster: %q is not running\n", name)
		os.RemoveAll(dir)
		return 0
	}
	if !ours(s, name) {
		fmt.Fprintf(stderr, "fluss-test-cluster: pid %d is not %q's server any more; removing its state\n", s.PID, name)
		os.RemoveAll(dir)
		return 0
	}
	fmt.Fprintf(stderr, "Stopping fluss-sidecar test cluster %q (pid %d)...\n", name, s.PID)
	syscall.Kill(s.PID, syscall.SIGTERM)
	deadline := time.Now().Add(30 * time.Second)
	for syscall.Kill(s.PID, 0) == nil {
		if time.Now().After(deadline) {
			syscall.Kill(s.PID, syscall.SIGKILL)
			deadline = time.Now().Add(time.Hour)
		}
		time.Sleep(20 * time.Millisecond)
	}
	os.RemoveAll(dir)
	fmt.Fprintln(stderr, "Cluster stopped.")
	return 0
}

// child is the detached server: it serves until SIGTERM or SIGINT.
func child(dir, name string, sasl bool, port int, stderr io.Writer) int {
	signal.Ignore(syscall.SIGHUP)
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	log := hclog.New(&hclog.LoggerOptions{Name: "fluss-test-cluster", Output: stderr, Level: hclog.Info})
	cfg := embedded.Config{Logger: log}
	st := State{PID: os.Getpid(), Name: name}
	if sasl {
		cfg.Listeners = []config.Listener{
			{Name: "CLIENT", Host: "127.0.0.1", Port: port},
			{Name: "PLAIN_CLIENT", Host: "127.0.0.1", Port: port + 100},
		}
		cfg.Security = embedded.Users(saslUsers, "CLIENT")
	} else {
		cfg.Listeners = []config.Listener{{Name: embedded.DefaultListenerName, Host: "127.0.0.1", Port: port}}
	}
	startCtx, stopStart := context.WithTimeout(ctx, startTimeout)
	srv, err := embedded.Start(startCtx, cfg)
	stopStart()
	if err != nil {
		log.Error("could not start", "error", err)
		return 1
	}
	defer srv.Close()
	api, err := controlapi.Listen("127.0.0.1:0", srv, log)
	if err != nil {
		log.Error("could not start the control API", "error", err)
		return 1
	}
	defer api.Close()
	ls := srv.Listeners()
	if sasl {
		saslAddr := ls[0].Address()
		st.BootstrapServers, st.SASLBootstrapServers = ls[1].Address(), &saslAddr
	} else {
		st.BootstrapServers = ls[0].Address()
	}
	st.ControlURL = api.URL()
	if err := writeState(dir, st); err != nil {
		log.Error("could not write the state", "error", err)
		return 1
	}
	log.Info("serving", "bootstrap_servers", st.BootstrapServers, "control_url", st.ControlURL)
	<-ctx.Done()
	log.Info("stopping")
	return 0
}

// writeState writes state.json whole (a rename), so that start never
// reads half of it.
func writeState(dir string, s State) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp := statePath(dir) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, statePath(dir))
}
