package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
)

func completionCommand() *command {
	return &command{
		name:    "completion",
		summary: "print a shell completion script (bash, zsh or fish)",
		usage:   "bash|zsh|fish",
		help: `Prints a completion script. Load it with:
  bash:  source <(switchboard completion bash)
  zsh:   source <(switchboard completion zsh)
  fish:  switchboard completion fish | source
Server names are completed from switchboard status --json.`,
		run: runCompletion,
	}
}

func runCompletion(ctx context.Context, e *env, args []string) error {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		return errHelp
	}
	if len(args) != 1 {
		return usagef("completion needs one shell: bash, zsh or fish")
	}
	var names []string
	for _, c := range commands() {
		if !c.hidden {
			names = append(names, c.name)
		}
	}
	cmds := strings.Join(names, " ")
	hosts := strings.Join(config.HostNames(), " ")
	switch args[0] {
	case "bash":
		fmt.Fprintf(e.stdout, bashCompletion, cmds, hosts)
	case "zsh":
		fmt.Fprintf(e.stdout, "autoload -U +X bashcompinit && bashcompinit\n"+bashCompletion, cmds, hosts)
	case "fish":
		fmt.Fprintf(e.stdout, fishCompletion, cmds, cmds, hosts)
	default:
		return usagef("unknown shell %q: use bash, zsh or fish", args[0])
	}
	return nil
}

// serverNames is a shell snippet printing configured server names.
const serverNames = `switchboard status --json 2>/dev/null | sed -n 's/^      "name": "\(.*\)",$/\1/p'`

const bashCompletion = `# switchboard bash completion
_switchboard() {
  local cur prev
  cur="${COMP_WORDS[COMP_CWORD]}"
  prev="${COMP_WORDS[COMP_CWORD-1]}"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "%[1]s help" -- "$cur")); return
  fi
  case "$prev" in
    --from) COMPREPLY=($(compgen -W "%[2]s" -- "$cur")); return ;;
  esac
  case "${COMP_WORDS[1]}" in
    remove|enable|disable|tools|resources|read|prompts|prompt|instructions|reconnect|index) COMPREPLY=($(compgen -W "$(` + serverNames + `)" -- "$cur")) ;;
    setup) COMPREPLY=($(compgen -W "%[2]s" -- "$cur")) ;;
    config) COMPREPLY=($(compgen -W "paths show validate" -- "$cur")) ;;
    completion) COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur")) ;;
  esac
}
complete -F _switchboard switchboard
`

const fishCompletion = `# switchboard fish completion
complete -c switchboard -f
complete -c switchboard -n "not __fish_seen_subcommand_from %[1]s" -a "%[2]s help"
complete -c switchboard -n "__fish_seen_subcommand_from remove enable disable tools resources read prompts prompt instructions reconnect index" -a "(` + serverNames + `)"
complete -c switchboard -n "__fish_seen_subcommand_from setup" -a "%[3]s"
complete -c switchboard -n "__fish_seen_subcommand_from config" -a "paths show validate"
complete -c switchboard -n "__fish_seen_subcommand_from completion" -a "bash zsh fish"
complete -c switchboard -l from -n "__fish_seen_subcommand_from import" -a "%[3]s"
`
