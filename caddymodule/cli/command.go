// Package cli is `caddy mcp ...`, the operator's commands: `tools` lists
// the tools of a config without starting anything, `call` calls one tool
// on a running endpoint, `pin` compares pinned sources with their pin
// files and writes them.
package cli

import (
	"encoding/json"
	"fmt"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
)

// clientVersion is the version `caddy mcp call` gives in its clientInfo.
var clientVersion string

// Lister lists one mcp handler of a config from its JSON (the handler's
// own config type is the shell's): the listing `caddy mcp tools` prints.
type Lister func(handler json.RawMessage) (Endpoint, error)

// Register adds `caddy mcp ...`, the operator's subcommands: `tools`
// reads a config and lists its tools without provisioning anything, with
// list for each mcp handler; `call` is a small MCP client for a running
// gateway, which introduces itself with the module's version; `pin`
// connects the pinned sources with connect.
func Register(list Lister, connect Pinner, version string) {
	clientVersion = version
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "mcp",
		Usage: "tools|call|pin ...",
		Short: "Inspects edgemcp configs and calls tools on a running MCP endpoint",
		Long: `
Operator commands of the edgemcp module.

  caddy mcp tools --config <file> [--adapter caddyfile] [--json]
      Lists the MCP tools a config declares: inputs with their types,
      defaults and enums, the connector or script behind each tool, and
      cache and auth settings. Nothing is started and no database is
      contacted; connection strings are never printed.

  caddy mcp call <url> <tool> [key=value ...] [--header 'Name: value' ...]
      Calls one tool on a running MCP endpoint and prints the result. On a
      JSON-RPC error it prints the code and message and exits 1.

  caddy mcp pin --config <file> [--adapter caddyfile] [--diff] [--write]
                [--source <name>...] [--tool <name>...]
      Connects each source with a pin file (pin <file> in its block),
      reads its tools as the gateway would, and compares them with the
      file. --diff prints each changed, new and gone tool with its diff
      and exits 1 when there is any; otherwise the files are written
      (the other sources' entries of a shared file are kept).
`,
		CobraFunc: func(cmd *cobra.Command) {
			cmd.Args = cobra.NoArgs
			cmd.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
			cmd.AddCommand(toolsCommand(list), callCommand(), pinCommand(connect))
		},
	})
}

// failed ends a subcommand with exit status 1 after it has printed its own
// diagnosis: cobra is told not to repeat the error or print the usage.
func failed(cmd *cobra.Command, err error) error {
	cmd.SilenceErrors = true
	cmd.SilenceUsage = true
	fmt.Fprintln(cmd.ErrOrStderr(), err)
	return err
}
