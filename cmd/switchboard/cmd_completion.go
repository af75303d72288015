package main

import (
	"context"
	"fmt"
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
It completes commands, their flags, server and host names, and the tool
names of call and describe from the catalog (see switchboard index). It
never connects to a server.`,
		quick: true,
		run:   runCompletion,
	}
}

func runCompletion(ctx context.Context, e *env, args []string) error {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		return errHelp
	}
	if len(args) != 1 {
		return usagef("completion needs one shell: bash, zsh or fish")
	}
	switch args[0] {
	case "bash":
		fmt.Fprint(e.stdout, bashCompletion)
	case "zsh":
		fmt.Fprint(e.stdout, "autoload -U +X bashcompinit && bashcompinit\n"+bashCompletion)
	case "fish":
		fmt.Fprint(e.stdout, fishCompletion)
	default:
		return usagef("unknown shell %q: use bash, zsh or fish", args[0])
	}
	return nil
}

// The scripts hand the words after "switchboard" to switchboard __complete
// (cmd_complete.go), the last being the word completed, and offer what it
// prints. Where it prints nothing, bash falls back to file names.

const bashCompletion = `# switchboard bash completion
_switchboard() {
  local IFS=$'\n'
  COMPREPLY=($(switchboard __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
  if [ "${#COMPREPLY[@]}" -eq 0 ]; then compopt -o default 2>/dev/null; fi
  return 0
}
complete -F _switchboard switchboard
`

const fishCompletion = `# switchboard fish completion
function __switchboard_complete
    set -l words (commandline -opc)
    set -l cur (commandline -ct)
    switchboard __complete $words[2..-1] "$cur" 2>/dev/null
end
complete -c switchboard -f -a '(__switchboard_complete)'
`
