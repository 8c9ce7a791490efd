package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/config"
)

// serve runs the sidecar until SIGINT or SIGTERM (SIGHUP is ignored, see
// signalContext), then shuts down as App.Shutdown says. Once it accepts connections, it prints the first
// listener's bound host:port as the first line of stdout, for harnesses
// that start it on port 0, and with --control the control API's URL as
// the second ("control http://127.0.0.1:PORT"). Its exit status is 2 for bad configuration, 1
// when the sidecar cannot start, and after a shutdown what shutdownStatus
// says.
func serve(args []string, stdout, stderr io.Writer) int {
	args, shorthands, err := serveFlags(args)
	var cfg *config.Config
	if err == nil {
		cfg, err = loadConfig(args)
	}
	if err != nil {
		fmt.Fprintln(stderr, "fluss-sidecar:", err)
		return 2
	}
	shorthands(cfg)
	settings, err := app.FromConfig(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "fluss-sidecar: configuration:", err)
		return 2
	}
	log := app.NewLogger("fluss-sidecar", settings.LogLevel, settings.Ops.LogFormat, stderr)
	// Raise the open-files limit and derive sidecar.max-connections from it
	// before the start-up line, which says both.
	app.PrepareStart(&settings)
	app.LogStartup(log, cfg, settings)
	for _, w := range app.CheckKeys(cfg) {
		log.Warn(w)
	}
	ctx, hurry, release := signalContext(log)
	defer release()
	a, err := app.Start(ctx, settings, app.Options{Logger: log})
	if err != nil {
		log.Error("could not start", "error", err)
		return 1
	}
	fmt.Fprintln(stdout, a.Addr())
	if u := a.ControlURL(); u != "" {
		// The second line, only with --control: where the control API is.
		fmt.Fprintln(stdout, "control", u)
	}
	<-ctx.Done()
	log.Info("shutting down")
	// Not ready at once, still serving for the accept delay, then the
	// drain (a second signal skips the rest of the delay).
	err = a.Shutdown(hurry)
	if err != nil {
		log.Error("shutdown was not clean", "error", err)
	}
	return shutdownStatus(err)
}

// loadConfig reads --config FILE (or --config=FILE) and -Dkey=value
// arguments, in order; later overrides win. Then it resolves ${env:NAME} and
// ${file:PATH} references.
func loadConfig(args []string) (*config.Config, error) {
	cfg := config.New()
	var overrides []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--config" || a == "-config" || a == "-c":
			if i+1 >= len(args) {
				return nil, fmt.Errorf("%s needs a file", a)
			}
			i++
			c, err := config.Load(args[i])
			if err != nil {
				return nil, err
			}
			cfg = mergeInto(c, cfg)
		case strings.HasPrefix(a, "--config="):
			c, err := config.Load(strings.TrimPrefix(a, "--config="))
			if err != nil {
				return nil, err
			}
			cfg = mergeInto(c, cfg)
		case strings.HasPrefix(a, "-D"):
			overrides = append(overrides, a)
		default:
			return nil, fmt.Errorf("unexpected argument %q (want --config FILE or -Dkey=value)", a)
		}
	}
	for _, o := range overrides {
		if err := cfg.ApplyOverride(o); err != nil {
			return nil, err
		}
	}
	// ${env:NAME} and ${file:PATH} in any value, after files and overrides.
	if err := (config.Providers{}).Resolve(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// mergeInto copies every key of src over dst, with which of them were YAML
// sequences, and returns dst.
func mergeInto(src, dst *config.Config) *config.Config {
	dst.Merge(src)
	return dst
}
