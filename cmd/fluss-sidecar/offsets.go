package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// offsetList collects repeated --offset flags.
type offsetList []string

func (o *offsetList) String() string     { return strings.Join(*o, " ") }
func (o *offsetList) Set(v string) error { *o = append(*o, v); return nil }

// clientHelp describes each client subcommand for --help.
var clientHelp = map[string][2]string{
	"register": {"fluss-sidecar offsets register --bootstrap HOST:PORT --producer-id ID --offset TABLE[:PARTITION]:BUCKET=OFFSET ... [--ttl-ms N] [--config FILE] [-Dkey=value ...]",
		"Registers a snapshot of a producer's offsets (REGISTER_PRODUCER_OFFSETS) and prints\n{\"producer_id\":...,\"result\":\"CREATED\"|\"ALREADY_EXISTS\"}."},
	"get": {"fluss-sidecar offsets get --bootstrap HOST:PORT --producer-id ID [--config FILE] [-Dkey=value ...]",
		"Prints a producer's snapshot (GET_PRODUCER_OFFSETS) as JSON, or {\"found\":false}."},
	"delete": {"fluss-sidecar offsets delete --bootstrap HOST:PORT --producer-id ID [--config FILE] [-Dkey=value ...]",
		"Deletes a producer's snapshot (DELETE_PRODUCER_OFFSETS)."},
}

// clientAuthHelp is the part of a client subcommand's help about logging in.
const clientAuthHelp = `
The command bootstraps like a Fluss client and logs in with Fluss's client
keys, from --config files or -D: client.security.protocol (PLAINTEXT or
SASL), client.security.sasl.mechanism (PLAIN), client.security.sasl.username
and client.security.sasl.password (or a PlainLoginModule entry in
client.security.sasl.jaas.config). Errors print as JSON on stderr, exit 1.

configuration:
` + configHelp

// offsetsUsage lists the offsets subcommands.
const offsetsUsage = `usage: fluss-sidecar offsets COMMAND [flags]

Commands that talk to a running sidecar (or any Fluss coordinator):
  register   register a producer's offsets snapshot
  get        print a producer's snapshot
  delete     delete a producer's snapshot

Commands that read ZooKeeper and remote storage directly, with the server's
configuration (--config server.yaml, -Dkey=value):
  list       every snapshot: id, expiration, live or expired, tables, buckets
  fsck       find dangling references, unreadable znodes, orphan and temporary files
  export     one row per bucket to Parquet, Arrow, CSV or JSON lines

Run 'fluss-sidecar offsets COMMAND --help' for a command's flags.
`

// offsetsCmd runs the offsets subcommands.
func offsetsCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, offsetsUsage)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, offsetsUsage)
		return 0
	case "list", "fsck", "export":
		return adminCmd(args[0], args[1:], stdout, stderr)
	}
	return clientCmd(args, stdout, stderr)
}

// clientCmd runs `offsets register|get|delete` against a sidecar or a Fluss
// coordinator, printing JSON on stdout. Errors are JSON on stderr, exit 1.
func clientCmd(args []string, stdout, stderr io.Writer) int {
	op := args[0]
	fs := flag.NewFlagSet("offsets "+op, flag.ContinueOnError)
	fs.SetOutput(stderr)
	bootstrap := fs.String("bootstrap", "127.0.0.1:9123", "HOST:PORT of the sidecar (or any Fluss server)")
	producerID := fs.String("producer-id", "", "producer id")
	timeout := fs.Duration("timeout", 30*time.Second, "time limit for the whole command")
	var offs offsetList
	var ttlMs *int64
	if op == "register" {
		fs.Var(&offs, "offset", "TABLE:BUCKET=OFFSET or TABLE:PARTITION:BUCKET=OFFSET; repeat for more buckets")
		fs.Func("ttl-ms", "snapshot TTL in ms (default: the server's "+app.KeyTTL+")", func(v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			ttlMs = &n
			return err
		})
	} else if op != "get" && op != "delete" {
		fmt.Fprintf(stderr, "unknown offsets command %q\n%s", op, offsetsUsage)
		return 2
	}
	if wantsHelp(args[1:]) {
		printHelp(stdout, fs, clientHelp[op][0], clientHelp[op][1]+"\n"+clientAuthHelp)
		return 0
	}
	cfgArgs, ok := parseCommandArgs(fs, args[1:], stderr)
	if !ok {
		return 2
	}
	cfg, err := loadConfig(cfgArgs)
	if err != nil {
		fmt.Fprintln(stderr, "fluss-sidecar:", err)
		return 2
	}
	login, err := clientLoginFrom(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "fluss-sidecar: configuration:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	var out any
	switch op {
	case "register":
		var req *messages.RegisterProducerOffsetsRequest
		req, err = buildRegister(*producerID, offs, ttlMs)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		out, err = callCoordinator(ctx, *bootstrap, login, func(c *wire.Client) (any, error) {
			resp := &messages.RegisterProducerOffsetsResponse{}
			if err := c.Call(ctx, messages.KeyRegisterProducerOffsets, 0, req, resp); err != nil {
				return nil, err
			}
			result := "CREATED"
			if resp.GetResult() == 1 {
				result = "ALREADY_EXISTS"
			} else if resp.Result != nil && resp.GetResult() != 0 {
				result = fmt.Sprintf("UNKNOWN(%d)", resp.GetResult())
			}
			return map[string]any{"producer_id": *producerID, "result": result}, nil
		})
	case "get":
		out, err = callCoordinator(ctx, *bootstrap, login, func(c *wire.Client) (any, error) {
			resp := &messages.GetProducerOffsetsResponse{}
			req := &messages.GetProducerOffsetsRequest{ProducerId: proto.String(*producerID)}
			if err := c.Call(ctx, messages.KeyGetProducerOffsets, 0, req, resp); err != nil {
				return nil, err
			}
			return getJSON(*producerID, resp), nil
		})
	case "delete":
		out, err = callCoordinator(ctx, *bootstrap, login, func(c *wire.Client) (any, error) {
			req := &messages.DeleteProducerOffsetsRequest{ProducerId: proto.String(*producerID)}
			if err := c.Call(ctx, messages.KeyDeleteProducerOffsets, 0, req, &messages.DeleteProducerOffsetsResponse{}); err != nil {
				return nil, err
			}
			return map[string]any{"producer_id": *producerID, "deleted": true}, nil
		})
	}
	if err != nil {
		writeJSON(stderr, errorJSON(err))
		return 1
	}
	writeJSON(stdout, out)
	return 0
}

// buildRegister parses --offset values into a request, grouping by table in
// the order tables first appear.
func buildRegister(producerID string, offs []string, ttlMs *int64) (*messages.RegisterProducerOffsetsRequest, error) {
	req := &messages.RegisterProducerOffsetsRequest{ProducerId: proto.String(producerID), TtlMs: ttlMs}
	byTable := map[int64]*messages.PbProducerTableOffsets{}
	for _, o := range offs {
		loc, val, ok := strings.Cut(o, "=")
		parts := strings.Split(loc, ":")
		if !ok || len(parts) < 2 || len(parts) > 3 {
			return nil, fmt.Errorf("--offset %q: want TABLE:BUCKET=OFFSET or TABLE:PARTITION:BUCKET=OFFSET", o)
		}
		nums := make([]int64, 0, 4)
		for _, p := range append(parts, val) {
			n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("--offset %q: %q is not a number", o, p)
			}
			nums = append(nums, n)
		}
		b := &messages.PbBucketOffset{LogEndOffset: proto.Int64(nums[len(nums)-1])}
		bucket := nums[len(nums)-2]
		if bucket < -1<<31 || bucket > 1<<31-1 {
			return nil, fmt.Errorf("--offset %q: bucket out of range", o)
		}
		b.BucketId = proto.Int32(int32(bucket))
		if len(parts) == 3 {
			b.PartitionId = proto.Int64(nums[1])
		}
		t := byTable[nums[0]]
		if t == nil {
			t = &messages.PbProducerTableOffsets{TableId: proto.Int64(nums[0])}
			byTable[nums[0]] = t
			req.TableOffsets = append(req.TableOffsets, t)
		}
		t.BucketOffsets = append(t.BucketOffsets, b)
	}
	return req, nil
}

func getJSON(producerID string, resp *messages.GetProducerOffsetsResponse) any {
	if resp.ProducerId == nil {
		return map[string]any{"producer_id": producerID, "found": false}
	}
	type bucketJSON struct {
		PartitionID  *int64 `json:"partition_id,omitempty"`
		BucketID     int32  `json:"bucket_id"`
		LogEndOffset int64  `json:"log_end_offset"`
	}
	type tableJSON struct {
		TableID int64        `json:"table_id"`
		Buckets []bucketJSON `json:"buckets"`
	}
	tables := []tableJSON{}
	for _, t := range resp.GetTableOffsets() {
		tj := tableJSON{TableID: t.GetTableId(), Buckets: []bucketJSON{}}
		for _, b := range t.GetBucketOffsets() {
			tj.Buckets = append(tj.Buckets, bucketJSON{PartitionID: b.PartitionId, BucketID: b.GetBucketId(), LogEndOffset: b.GetLogEndOffset()})
		}
		tables = append(tables, tj)
	}
	return map[string]any{
		"producer_id":     resp.GetProducerId(),
		"found":           true,
		"expiration_time": resp.GetExpirationTime(),
		"expires_at":      time.UnixMilli(resp.GetExpirationTime()).UTC().Format(time.RFC3339Nano),
		"tables":          tables,
	}
}

// callCoordinator bootstraps like a Fluss client: handshake with the
// bootstrap server, ask it for metadata, and run fn against the coordinator
// it names (the same connection when that is the bootstrap server itself).
func callCoordinator(ctx context.Context, bootstrap string, login *clientLogin, fn func(*wire.Client) (any, error)) (any, error) {
	c, err := dialHandshake(ctx, bootstrap, login)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	md := &messages.MetadataResponse{}
	if err := c.Call(ctx, messages.KeyGetMetadata, 0, &messages.MetadataRequest{}, md); err != nil {
		return nil, fmt.Errorf("metadata from %s: %w", bootstrap, err)
	}
	coord := md.GetCoordinatorServer()
	if coord == nil {
		return nil, fmt.Errorf("%s names no coordinator in its metadata", bootstrap)
	}
	addr := net.JoinHostPort(coord.GetHost(), strconv.Itoa(int(coord.GetPort())))
	if addr == bootstrap {
		return fn(c)
	}
	cc, err := dialHandshake(ctx, addr, login)
	if err != nil {
		return nil, fmt.Errorf("coordinator %s: %w", addr, err)
	}
	defer cc.Close()
	return fn(cc)
}

// dialHandshake connects, sends API_VERSIONS and logs in when login is set.
func dialHandshake(ctx context.Context, addr string, login *clientLogin) (*wire.Client, error) {
	c, err := wire.Dial(ctx, addr, wire.ClientOptions{})
	if err != nil {
		return nil, err
	}
	if _, err := c.Handshake(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("handshake with %s: %w", addr, err)
	}
	if err := login.authenticate(ctx, c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func errorJSON(err error) map[string]any {
	if fe, ok := flusserr.From(err); ok {
		msg := fe.Message
		if msg == "" {
			if i, ok := flusserr.Lookup(fe.Code); ok {
				msg = i.DefaultMessage
			}
		}
		return map[string]any{"error_code": int32(fe.Code), "error_name": fe.Code.Name(), "error_message": msg}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return map[string]any{"error": "timed out: " + err.Error()}
	}
	return map[string]any{"error": err.Error()}
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
