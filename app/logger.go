package app

import (
	"io"

	"github.com/hashicorp/go-hclog"
)

// NewLogger returns the sidecar's logger at level in format ("text" or
// "json", hclog's JSON lines).
func NewLogger(name, level, format string, out io.Writer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name: name, Level: hclog.LevelFromString(level), Output: out, JSONFormat: format == "json",
	})
}
