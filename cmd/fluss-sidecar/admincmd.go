package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/admin"
	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/remotestore"
	"github.com/fluss-sidecar/fluss-sidecar/storage/zkstore"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// adminHelp describes each admin subcommand for --help.
var adminHelp = map[string][2]string{
	"list": {"fluss-sidecar offsets list --config server.yaml [-Dkey=value ...] [--output json|table] [--expired]",
		`Lists every producer offsets snapshot, sorted by producer id: expiration time,
state (live, expired, unreadable), table ids and bucket count. It reads
ZooKeeper and remote storage directly with the server's configuration
(zookeeper.*, ` + app.KeyRemoteDataDir + ` and the file system keys); no sidecar needs to
run. JSON lines by default, one object per snapshot.`},
	"fsck": {"fluss-sidecar offsets fsck --config server.yaml [-Dkey=value ...] [--repair] [--grace-period DURATION]",
		`Checks the registry: unreadable znodes, references to missing files or to paths
outside ` + app.KeyRemoteDataDir + `, unreadable files, files whose content disagrees with
their directory or znode entry, and files no snapshot names (orphans, and
temporary files of interrupted writes), with their age. Prints one JSON line
per finding and a summary line; exits 1 when anything is left to fix.

--repair deletes only orphan and temporary files that no znode names (the
owner's znode is read again just before each delete) and that are older than
the grace period (` + app.KeyOrphanGrace + `), and prints each action.
Files of a producer whose znode cannot be read are never deleted.`},
	"export": {"fluss-sidecar offsets export --config server.yaml [-Dkey=value ...] --format parquet|arrow|csv|jsonl --output FILE",
		`Writes one row per bucket of every snapshot: producer_id, table_id,
partition_id (null for a non-partitioned table), bucket_id, log_end_offset,
expiration_time (epoch ms) and expired. Arrow is the Arrow IPC file format;
Parquet is written through arrow-go's pqarrow with Snappy compression. The
file is replaced atomically. Unreadable znodes and files are reported on
stderr as JSON lines and left out; the exit status is then 1.`},
}

// orphanGraceDefault is the default of sidecar.orphan-cleanup.grace-period.
func orphanGraceDefault() string {
	k, _ := app.LookupConfigKey(app.KeyOrphanGrace)
	return k.Default
}

// adminCmd runs `offsets list|fsck|export`.
func adminCmd(op string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("offsets "+op, flag.ContinueOnError)
	fs.SetOutput(stderr)
	timeout := fs.Duration("timeout", 30*time.Minute, "time limit for the whole command")
	parallelism := fs.Int("parallelism", 16, "ZooKeeper and file reads in flight")
	var (
		output, format, outFile string
		expired, repair         bool
		grace                   time.Duration
		graceSet                bool
	)
	switch op {
	case "list":
		fs.StringVar(&output, "output", "json", "json (JSON lines) or table")
		fs.BoolVar(&expired, "expired", false, "only expired snapshots")
	case "fsck":
		fs.BoolVar(&repair, "repair", false, "delete unreferenced files older than the grace period")
		fs.Func("grace-period", "files younger than this are never deleted (default: "+app.KeyOrphanGrace+", "+orphanGraceDefault()+")", func(v string) error {
			d, err := config.ParseDuration(v)
			grace, graceSet = d, true
			return err
		})
	case "export":
		fs.StringVar(&format, "format", "", "parquet, arrow, csv or jsonl (required)")
		fs.StringVar(&outFile, "output", "", "file to write (required)")
	}
	if wantsHelp(args) {
		printHelp(stdout, fs, adminHelp[op][0], adminHelp[op][1]+"\n\nconfiguration:\n"+configHelp)
		return 0
	}
	cfgArgs, ok := parseCommandArgs(fs, args, stderr)
	if !ok {
		return 2
	}
	switch {
	case op == "list" && output != "json" && output != "table":
		fmt.Fprintf(stderr, "--output %q: want json or table\n", output)
		return 2
	case op == "export" && !slices.Contains(admin.Formats, format):
		fmt.Fprintf(stderr, "--format %q: want one of %s\n", format, strings.Join(admin.Formats, ", "))
		return 2
	case op == "export" && outFile == "":
		fmt.Fprintln(stderr, "--output FILE is required")
		return 2
	case graceSet && grace < 0:
		fmt.Fprintln(stderr, "--grace-period must not be negative")
		return 2
	}
	cfg, err := loadConfig(cfgArgs)
	if err != nil {
		fmt.Fprintln(stderr, "fluss-sidecar:", err)
		return 2
	}
	settings, err := app.FromConfig(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "fluss-sidecar: configuration:", err)
		return 2
	}
	if !graceSet {
		grace = settings.OrphanGracePeriod
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "fluss-sidecar", Level: hclog.Warn, Output: stderr})

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	a, closeFn, err := openAdmin(ctx, settings, log, *parallelism)
	if err != nil {
		writeJSON(stderr, errorJSON(err))
		return 1
	}
	defer closeFn()

	out := admin.NewJSONLines(stdout)
	errOut := admin.NewJSONLines(stderr)
	switch op {
	case "list":
		var table *admin.ListTable
		if output == "table" {
			table = admin.NewListTable(stdout)
		}
		err = a.List(ctx, admin.ListOptions{ExpiredOnly: expired}, func(e admin.ListEntry) error {
			if table != nil {
				return table.Write(e)
			}
			return out.Write(e)
		})
		if table != nil {
			table.Flush()
		}
		if err != nil {
			writeJSON(stderr, errorJSON(err))
			return 1
		}
		return 0
	case "fsck":
		rep, err := a.Fsck(ctx, admin.FsckOptions{Repair: repair, GracePeriod: grace},
			func(f admin.Finding) error { return out.Write(map[string]any{"finding": f}) },
			func(act admin.Action) error { return out.Write(map[string]any{"repair": act}) })
		if err != nil {
			writeJSON(stderr, errorJSON(err))
			return 1
		}
		out.Write(map[string]any{"summary": rep})
		if !rep.Clean() {
			return 1
		}
		return 0
	default: // export
		rep, err := a.ExportFile(ctx, format, outFile, func(s admin.Skip) error {
			return errOut.Write(map[string]any{"skipped": s})
		})
		if err != nil {
			writeJSON(stderr, errorJSON(err))
			return 1
		}
		out.Write(map[string]any{"exported": rep, "format": format, "output": outFile})
		if rep.Skipped > 0 {
			return 1
		}
		return 0
	}
}

// openAdmin connects to ZooKeeper and opens remote storage as the server
// would, and returns an Admin over them and a function closing both.
func openAdmin(ctx context.Context, s app.Settings, log hclog.Logger, parallelism int) (*admin.Admin, func(), error) {
	zc, err := zk.Connect(ctx, s.ZooKeeperConfig(log))
	if err != nil {
		return nil, nil, fmt.Errorf("connect to ZooKeeper %s: %w", s.ZooKeeperAddress, err)
	}
	files, err := remotestore.Open(ctx, s.RemoteDataDir, s.RemoteOptions(log))
	if err != nil {
		zc.Close()
		return nil, nil, fmt.Errorf("open %s %s: %w", s.RemoteDataDirKey, s.RemoteDataDir, err)
	}
	// The files behind the portable layer, as the server has them; the
	// znodes are read raw, as bytes, which no SnapshotStore offers.
	a, err := admin.New(admin.Config{Snapshots: zkstore.New(zc), Files: storage.CheckedFilesAndOrphans(files), Logger: log, Parallelism: parallelism})
	if err != nil {
		files.Close()
		zc.Close()
		return nil, nil, err
	}
	return a, func() { files.Close(); zc.Close() }, nil
}
