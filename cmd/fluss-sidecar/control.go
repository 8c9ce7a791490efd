package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/embedded/controlapi"
)

const controlHelp = `usage: fluss-sidecar control [--url URL] COMMAND [ARGS]

Talks to the control API of a running embedded sidecar (serve --embedded
--control 127.0.0.1:PORT). URL defaults to $FLUSS_SIDECAR_CONTROL. Every
answer is printed as JSON; the exit status is 0 on success, 1 when the API
refused (its error on stderr) or a wait was not reached, 2 for bad usage.

commands:
  rule add --action A [--api-key K] [--code C] [--message M] [--duration D]
           [--count N] [--producer-id P] [--conn-id N]
                       install a rule (A: error, stall, delay, drop,
                       apply_then_error, apply_then_drop); --count 0 keeps it
  rule list            every rule
  rule get ID          one rule
  rule rm ID|all       remove one rule, or every rule
  wait ID [--hits N] [--timeout D]
                       wait until rule ID acted on N requests (default 1)
  release [ID]         let stalled requests go on (all without ID)
  log [--since N] [--limit N] [--api-key K] [--producer-id P] [--conn-id N]
                       the request log
  log clear            forget the log
  clock                the clock TTLs read
  clock advance D [--no-expire]
                       move it forward by D (such as 25h) and expire
  store                list snapshots and files
  store reset          delete every snapshot
  reset                rules, log, clock and store back to the start
  server               where the Fluss listeners are
`

// controlCmd runs `fluss-sidecar control ...`.
func controlCmd(args []string, stdout, stderr io.Writer) int {
	base := os.Getenv("FLUSS_SIDECAR_CONTROL")
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch {
		case args[0] == "-h" || args[0] == "--help":
			fmt.Fprint(stdout, controlHelp)
			return 0
		case args[0] == "--url" && len(args) > 1:
			base, args = args[1], args[2:]
		case strings.HasPrefix(args[0], "--url="):
			base, args = strings.TrimPrefix(args[0], "--url="), args[1:]
		default:
			fmt.Fprintf(stderr, "fluss-sidecar control: unknown flag %q\n%s", args[0], controlHelp)
			return 2
		}
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, controlHelp)
		return 2
	}
	if base == "" {
		fmt.Fprintln(stderr, "fluss-sidecar control: give --url http://127.0.0.1:PORT or set FLUSS_SIDECAR_CONTROL")
		return 2
	}
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	c := &controlapi.Client{Base: base, HTTP: &http.Client{Timeout: controlapi.MaxWait + time.Minute}}
	ctx := context.Background()
	out, err := controlRun(ctx, c, args)
	var usage usageError
	switch {
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "fluss-sidecar control: %v\n%s", err, controlHelp)
		return 2
	case err != nil:
		fmt.Fprintln(stderr, "fluss-sidecar control:", err)
		if out == nil {
			return 1
		}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.Encode(out)
	if err != nil {
		return 1
	}
	return 0
}

type usageError struct{ error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	// Positional arguments may come before or after the flags.
	var pos []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return nil, usageError{err}
		}
		args = fs.Args()
		if len(args) > 0 {
			pos, args = append(pos, args[0]), args[1:]
		}
	}
	return pos, nil
}

func idArg(pos []string, what string) (uint64, error) {
	if len(pos) != 1 {
		return 0, usagef("%s needs one rule id", what)
	}
	id, err := strconv.ParseUint(pos[0], 10, 63)
	if err != nil {
		return 0, usagef("%s: %q is not a rule id", what, pos[0])
	}
	return id, nil
}

func controlRun(ctx context.Context, c *controlapi.Client, args []string) (any, error) {
	cmd, args := args[0], args[1:]
	var out any
	switch cmd {
	case "rule":
		if len(args) == 0 {
			return nil, usagef("rule needs add, list, get or rm")
		}
		sub, args := args[0], args[1:]
		switch sub {
		case "add":
			fs := flag.NewFlagSet("rule add", flag.ContinueOnError)
			action := fs.String("action", "", "")
			key := fs.Int("api-key", -1, "")
			code := fs.Int("code", 0, "")
			msg := fs.String("message", "", "")
			dur := fs.String("duration", "", "")
			count := fs.Int("count", 1, "")
			pid := fs.String("producer-id", "", "")
			conn := fs.Uint64("conn-id", 0, "")
			if pos, err := parseFlags(fs, args); err != nil || len(pos) > 0 {
				return nil, usagef("rule add takes only flags: %v %v", pos, err)
			}
			r := controlapi.RuleJSON{Action: *action, Code: int32(*code), Message: *msg, Duration: *dur,
				Count: count, ProducerID: *pid, ConnID: *conn}
			if *key >= 0 {
				k := int32(*key)
				r.APIKey = &k
			}
			return c.AddRule(ctx, r)
		case "list":
			err := c.Do(ctx, http.MethodGet, "/v1/rules", nil, http.StatusOK, &out)
			return out, err
		case "get":
			id, err := idArg(args, "rule get")
			if err != nil {
				return nil, err
			}
			err = c.Do(ctx, http.MethodGet, fmt.Sprintf("/v1/rules/%d", id), nil, http.StatusOK, &out)
			return out, err
		case "rm":
			if len(args) == 1 && args[0] == "all" {
				err := c.Do(ctx, http.MethodDelete, "/v1/rules", nil, http.StatusOK, &out)
				return out, err
			}
			id, err := idArg(args, "rule rm")
			if err != nil {
				return nil, err
			}
			err = c.Do(ctx, http.MethodDelete, fmt.Sprintf("/v1/rules/%d", id), nil, http.StatusOK, &out)
			return out, err
		}
		return nil, usagef("unknown rule command %q", sub)
	case "wait":
		fs := flag.NewFlagSet("wait", flag.ContinueOnError)
		hits := fs.Int("hits", 1, "")
		timeout := fs.String("timeout", "", "")
		pos, err := parseFlags(fs, args)
		if err != nil {
			return nil, err
		}
		id, err := idArg(pos, "wait")
		if err != nil {
			return nil, err
		}
		var res struct {
			Reached bool                `json:"reached"`
			Rule    controlapi.RuleJSON `json:"rule"`
		}
		res.Reached, res.Rule, err = c.Wait(ctx, id, *hits, *timeout)
		if err == nil && !res.Reached {
			return res, fmt.Errorf("rule %d acted on %d requests, not %d, before the timeout", id, *res.Rule.Hits, *hits)
		}
		return res, err
	case "release":
		var rule uint64
		if len(args) > 0 {
			id, err := idArg(args, "release")
			if err != nil {
				return nil, err
			}
			rule = id
		}
		n, err := c.Release(ctx, rule)
		if err != nil {
			return nil, err
		}
		return map[string]int{"released": n}, nil
	case "log":
		if len(args) == 1 && args[0] == "clear" {
			err := c.Do(ctx, http.MethodDelete, "/v1/log", nil, http.StatusOK, &out)
			return out, err
		}
		fs := flag.NewFlagSet("log", flag.ContinueOnError)
		q := url.Values{}
		for _, name := range []string{"since", "limit", "api-key", "producer-id", "conn-id"} {
			fs.Func(name, "", func(v string) error {
				q.Set(strings.ReplaceAll(name, "-", "_"), v)
				return nil
			})
		}
		if pos, err := parseFlags(fs, args); err != nil || len(pos) > 0 {
			return nil, usagef("log takes flags or clear: %v %v", pos, err)
		}
		page, err := c.Log(ctx, q)
		return page, err
	case "clock":
		if len(args) == 0 {
			err := c.Do(ctx, http.MethodGet, "/v1/clock", nil, http.StatusOK, &out)
			return out, err
		}
		if args[0] != "advance" {
			return nil, usagef("unknown clock command %q", args[0])
		}
		fs := flag.NewFlagSet("clock advance", flag.ContinueOnError)
		noExpire := fs.Bool("no-expire", false, "")
		pos, err := parseFlags(fs, args[1:])
		if err != nil {
			return nil, err
		}
		if len(pos) != 1 {
			return nil, usagef("clock advance needs one duration, such as 25h")
		}
		expire := !*noExpire
		err = c.Do(ctx, http.MethodPost, "/v1/clock/advance", controlapi.AdvanceJSON{By: pos[0], Expire: &expire}, http.StatusOK, &out)
		return out, err
	case "store":
		if len(args) == 1 && args[0] == "reset" {
			err := c.Do(ctx, http.MethodDelete, "/v1/store", nil, http.StatusOK, &out)
			return out, err
		}
		if len(args) > 0 {
			return nil, usagef("unknown store command %q", args[0])
		}
		err := c.Do(ctx, http.MethodGet, "/v1/store", nil, http.StatusOK, &out)
		return out, err
	case "reset":
		err := c.Do(ctx, http.MethodPost, "/v1/reset", nil, http.StatusOK, &out)
		return out, err
	case "server":
		err := c.Do(ctx, http.MethodGet, "/v1/server", nil, http.StatusOK, &out)
		return out, err
	}
	return nil, usagef("unknown command %q", cmd)
}
