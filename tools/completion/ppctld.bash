# bash completion for ppctld(8).                         -*- shell-script -*-
#
# Install as /usr/share/bash-completion/completions/ppctld, or source it.
# Written by hand from `ppctld --help`; checked against the binary by
# tests/docs/run.sh.  Needs nothing from the bash-completion package.

# COMPREPLY: the candidates of `compgen ARGS -- "$cur"`, one per line ($cur
# is the caller's).
_ppctld_reply()
{
	mapfile -t COMPREPLY < <(compgen "$@" -- "$cur")
}

_ppctld()
{
	local cur=${COMP_WORDS[COMP_CWORD]}
	local prev=''
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()

	case "$prev" in
	-c | --config | --textfile | --pidfile)
		_ppctld_reply -f; return ;;
	--socket)
		mapfile -t COMPREPLY < <(compgen -W none -- "$cur"; compgen -f -- "$cur")
		return ;;
	-s | --source)
		_ppctld_reply -W 'ppkit netdev all'; return ;;
	-l | --listen)
		_ppctld_reply -W '127.0.0.1:9105 none'; return ;;
	--socket-mode)
		_ppctld_reply -W '0600 0660'; return ;;
	--socket-group)
		_ppctld_reply -g; return ;;
	-i | --interval | --history | --max-clients | --alert-hit-below | \
	--alert-hit-for | --alert-leak-for | --alert-leak-min-pages)
		return ;;	# a number or a duration
	esac

	_ppctld_reply -W '-h --help --version -c --config -i --interval --history
		-s --source -l --listen --textfile --socket --socket-mode
		--socket-group --max-clients --alert-hit-below --alert-hit-for
		--alert-leak-for --alert-leak-min-pages -f --foreground
		--log-stderr --pidfile'
}

complete -F _ppctld ppctld
