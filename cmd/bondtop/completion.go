package main

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// completionUsage is `bondtop completion -h`.
const completionUsage = `bondtop completion - a shell completion script on standard output

Usage:
  bondtop completion bash   source <(bondtop completion bash), or save it as
                            /etc/bash_completion.d/bondtop
  bondtop completion zsh    save as _bondtop in a directory of $fpath
  bondtop completion fish   save as ~/.config/fish/completions/bondtop.fish

The scripts complete the subcommands, the flags (from bondtop's own help),
and bond and slave names read from this host's /sys/class/net when you
press Tab.
`

// subcommands are the words the first argument completes to.
var subcommands = []string{"list", "hash", "load", "serve", "completion"}

var flagPattern = regexp.MustCompile(`(?m)^\s+(?:-[a-z], )?(--[a-z][a-z0-9-]*)`)

// flagsOf lists the long flags a help text documents, in order, once.
func flagsOf(help string) []string {
	var out []string
	for _, m := range flagPattern.FindAllStringSubmatch(help, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// Shell snippets that list this host's bonds and their slaves from sysfs
// when Tab is pressed (the names change; a script written once cannot
// hold them).
const (
	shBonds  = `cat /sys/class/net/bonding_masters 2>/dev/null`
	shSlaves = `cat /sys/class/net/*/bonding/slaves 2>/dev/null`
)

func runCompletion(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(stdout, completionUsage)
		return exitOK
	}
	if len(args) != 1 {
		fmt.Fprintf(stderr, "bondtop: completion needs one shell: bash, zsh or fish\nRun 'bondtop completion -h' for usage.\n")
		return exitUsage
	}
	main, hash := usageText, ""
	if i := strings.Index(usageText, "\nHash "); i >= 0 {
		main, hash = usageText[:i], usageText[i:]
	}
	sets := flagSets{main: flagsOf(main), hash: flagsOf(hash), load: flagsOf(loadUsage), serve: flagsOf(serveUsage)}
	switch args[0] {
	case "bash":
		fmt.Fprint(stdout, bashCompletion(sets))
	case "zsh":
		fmt.Fprint(stdout, "#compdef bondtop\n"+
			"# bondtop completion zsh: the bash completion through bashcompinit\n"+
			"autoload -U +X bashcompinit && bashcompinit\n"+
			bashCompletion(sets))
	case "fish":
		fmt.Fprint(stdout, fishCompletion(sets))
	default:
		fmt.Fprintf(stderr, "bondtop: completion: unknown shell %q: bash, zsh or fish\n", args[0])
		return exitUsage
	}
	return exitOK
}

// flagSets are the long flags of each command, from its help.
type flagSets struct{ main, hash, load, serve []string }

func bashCompletion(f flagSets) string {
	return fmt.Sprintf(`# bondtop completion bash
_bondtop() {
    local cur prev sub words
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    sub=""
    [ "$COMP_CWORD" -gt 1 ] && sub="${COMP_WORDS[1]}"
    case "$prev" in
        --root|--record|--replay)
            COMPREPLY=( $(compgen -f -- "$cur") ); return ;;
        --slave)
            COMPREPLY=( $(compgen -W "$(%s)" -- "$cur") ); return ;;
        --bond)
            COMPREPLY=( $(compgen -W "$(%s)" -- "$cur") ); return ;;
        --interval)
            COMPREPLY=( $(compgen -W "100ms 200ms 500ms 1s 2s 5s 10s" -- "$cur") ); return ;;
    esac
    case "$sub" in
        completion) COMPREPLY=( $(compgen -W "bash zsh fish" -- "$cur") ); return ;;
        load) words="%s" ;;
        serve) words="%s" ;;
        hash) words="%s $(%s)" ;;
        *)
            words="%s $(%s)"
            [ "$COMP_CWORD" -eq 1 ] && words="$words %s"
            ;;
    esac
    COMPREPLY=( $(compgen -W "$words" -- "$cur") )
}
complete -F _bondtop bondtop
`, shSlaves, shBonds, strings.Join(f.load, " "), strings.Join(f.serve, " "), strings.Join(f.hash, " "), shBonds,
		strings.Join(f.main, " "), shBonds, strings.Join(subcommands, " "))
}

func fishCompletion(f flagSets) string {
	var b strings.Builder
	b.WriteString("# bondtop completion fish\n")
	b.WriteString("complete -c bondtop -f\n")
	fmt.Fprintf(&b, "complete -c bondtop -n __fish_use_subcommand -a '%s'\n", strings.Join(subcommands, " "))
	fmt.Fprintf(&b, "complete -c bondtop -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'\n")
	fmt.Fprintf(&b, "complete -c bondtop -n 'not __fish_seen_subcommand_from load serve completion' -a '(%s | string split \" \")' -d bond\n", shBonds)
	add := func(cond string, flags []string) {
		for _, f := range flags {
			fmt.Fprintf(&b, "complete -c bondtop -n '%s' -l %s\n", cond, strings.TrimPrefix(f, "--"))
		}
	}
	add("not __fish_seen_subcommand_from load serve hash completion", f.main)
	add("__fish_seen_subcommand_from hash", f.hash)
	add("__fish_seen_subcommand_from load", f.load)
	add("__fish_seen_subcommand_from serve", f.serve)
	fmt.Fprintf(&b, "complete -c bondtop -l slave -x -a '(%s | string split \" \")' -d slave\n", shSlaves)
	fmt.Fprintf(&b, "complete -c bondtop -l bond -x -a '(%s | string split \" \")' -d bond\n", shBonds)
	b.WriteString("complete -c bondtop -l root -r -F\ncomplete -c bondtop -l record -r -F\ncomplete -c bondtop -l replay -r -F\n")
	return b.String()
}
