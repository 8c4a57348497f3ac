# bash completion for ppctl(8).                          -*- shell-script -*-
#
# Install as /usr/share/bash-completion/completions/ppctl, or source it.
# Written by hand from `ppctl --help` and `ppctl COMMAND --help`; checked
# against the binary by tests/docs/run.sh.  Needs nothing from the
# bash-completion package.  Pool ids come from `ppctl --json list` (of the
# --source on the line), ppsim devices from `ppctl --json sim list`; when
# those fail (module not loaded) nothing is offered for them.

# Options that take a value: the word after one is not a command.
_ppctl_takes_arg()
{
	case "$1" in
	-s | --source | -d | --dev | -i | --interval | -c | --count | -n | --netns | \
	--owner | --state | -g | --group-by | \
	--ring-size | --refill-batch | --since | --socket | --sort | \
	--rx-queues | --tx-queues | --pool | --rx | --sync | --prefetch | \
	--cache | --numa-rule | --frag | --irq-cpu | --rate | --size | --ethertype | \
	--dst-port | --cpu | --mode | --prog)
		return 0 ;;
	esac
	return 1
}

# ppctl's JSON output, or nothing; never waits long for a stuck family.
_ppctl_json()
{
	local ppctl=$1
	shift
	if command -v timeout > /dev/null; then
		timeout 2 "$ppctl" --json "$@" 2> /dev/null
	else
		"$ppctl" --json "$@" 2> /dev/null
	fi
}

_ppctl_pool_ids()
{
	_ppctl_json "$1" ${2:+--source "$2"} list |
		grep -oE '"id": ?[0-9]+' | grep -oE '[0-9]+$'
}

_ppctl_sim_devs()
{
	_ppctl_json "$1" sim list | grep -oE '"ifname": ?"[^"]+"' |
		sed -E 's/.*"([^"]+)"$/\1/'
}

# COMPREPLY: the candidates of `compgen ARGS -- "$cur"`, one per line, so
# that names with spaces survive ($cur is the caller's).
_ppctl_reply()
{
	mapfile -t COMPREPLY < <(compgen "$@" -- "$cur")
}

_ppctl_cpus()
{
	seq 0 $(($(getconf _NPROCESSORS_CONF 2> /dev/null || echo 1) - 1))
}

_ppctl_ifnames()
{
	local d
	for d in /sys/class/net/*; do
		[ -e "$d" ] && printf '%s\n' "${d##*/}"
	done
}

_ppctl()
{
	local cur=${COMP_WORDS[COMP_CWORD]}
	local prev=''
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	local ppctl=${COMP_WORDS[0]}
	local global='-h --help --version -s --source -n --netns -j --json -p --pretty -r --raw --human'
	local cmd='' sub='' subsub='' source='' npos=0 i w
	COMPREPLY=()

	# The command path so far (ppctl [sim|xdp] [gen] ...), skipping options
	# and their values; npos counts positional words after it.
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [[ $w == -* ]]; then
			if _ppctl_takes_arg "$w"; then
				[[ $w == -s || $w == --source ]] && source=${COMP_WORDS[i + 1]}
				i=$((i + 1))
			fi
			continue
		fi
		if [ -z "$cmd" ]; then
			cmd=$w
		elif [[ $cmd == sim || $cmd == xdp ]] && [ -z "$sub" ]; then
			sub=$w
		elif [[ $cmd == sim && $sub == gen ]] && [ -z "$subsub" ]; then
			subsub=$w
		else
			npos=$((npos + 1))
		fi
	done

	# The value of an option.
	case "$prev" in
	-s | --source)
		_ppctl_reply -W 'ppkit netdev all'; return ;;
	--sort)
		case $cmd in
		top) _ppctl_reply -W 'served hit recycle inflight id' ;;
		list) _ppctl_reply -W 'id dev owner state inflight' ;;
		*) _ppctl_reply -W 'id dev owner state inflight served hit recycle' ;;
		esac
		return ;;
	--state)
		_ppctl_reply -W 'live detached'; return ;;
	-g | --group-by)
		_ppctl_reply -W 'pool device'; return ;;
	--netns)
		_ppctl_reply -W "$(ls /run/netns 2> /dev/null)"; return ;;
	-n)
		# top's -n is its count; elsewhere, the namespace.
		[[ $cmd == top ]] || _ppctl_reply -W "$(ls /run/netns 2> /dev/null)"
		return ;;
	--owner)
		return ;;
	-d | --dev)
		_ppctl_reply -W "$(_ppctl_ifnames)"; return ;;
	--pool)
		_ppctl_reply -W 'ppkit native none'; return ;;
	--rx)
		_ppctl_reply -W 'zerocopy copy'; return ;;
	--sync)
		_ppctl_reply -W 'precise full'; return ;;
	--prefetch)
		_ppctl_reply -W 'after-sync before-sync'; return ;;
	--cache)
		_ppctl_reply -W 'lifo fifo'; return ;;
	--numa-rule | --frag)
		_ppctl_reply -W 'on off'; return ;;
	--irq-cpu)
		_ppctl_reply -W "auto $(_ppctl_cpus)"; return ;;
	--cpu)
		[[ $cmd == sim ]] && _ppctl_reply -W "last $(_ppctl_cpus)"
		return ;;
	--ethertype)
		_ppctl_reply -W '0x0800 0x86dd 0x88b6'; return ;;
	--mode)
		_ppctl_reply -W 'native generic'; return ;;
	--prog)
		mapfile -t COMPREPLY < <(compgen -W 'drop pass tx' -- "$cur"
			compgen -f -X '!*.o' -- "$cur"; compgen -d -- "$cur")
		return ;;
	--socket)
		_ppctl_reply -f; return ;;
	-i | --interval | -c | --count | --ring-size | --refill-batch | --since | \
	--rx-queues | --tx-queues | --rate | --size | --dst-port)
		return ;;	# a number or a duration
	esac

	# Options of the command so far.
	if [[ $cur == -* ]]; then
		local opts=$global
		# --source belongs to the pool commands: sim and xdp refuse it.
		[[ $cmd == sim || $cmd == xdp ]] && opts='-h --help -n --netns -j --json -p --pretty -r --raw --human'
		case "$cmd/$sub/$subsub" in
		list/*) opts+=' -d --dev --owner --state --sort' ;;
		stats/*) opts+=' -d --dev --owner --state --sort -g --group-by -i --interval -c --count -l --long' ;;
		set/*) opts+=' --ring-size --refill-batch' ;;
		holders/*) opts+=' -d --dev' ;;
		monitor/*) opts+=' -c --count' ;;
		history/*) opts+=' --since --socket' ;;
		top/*) opts+=' -i --interval -n --count --sort --socket' ;;
		sim/add/*) opts+=' --rx-queues --tx-queues --ring-size --pair' ;;
		sim/set/*) opts+=' --pool --rx --sync --prefetch --cache --numa-rule --frag --irq-cpu --ring-size' ;;
		sim/gen/start) opts+=' --rate --size --ethertype --dst-port --count --cpu' ;;
		xdp/attach/*) opts+=' --mode --prog -f --force' ;;
		xdp/detach/*) opts+=' --mode' ;;
		esac
		_ppctl_reply -W "$opts"
		return
	fi

	# Commands, then their positional arguments.
	case "$cmd/$sub/$subsub" in
	//)
		_ppctl_reply -W 'list stats set holders monitor history top sim xdp' ;;
	sim//)
		_ppctl_reply -W 'list add del set gen' ;;
	sim/gen/)
		_ppctl_reply -W 'start stop' ;;
	xdp//)
		_ppctl_reply -W 'attach detach status' ;;
	stats/* | holders/*)
		_ppctl_reply -W "$(_ppctl_pool_ids "$ppctl" "$source")" ;;
	set/* | history/*)
		[ $npos -eq 0 ] &&
			_ppctl_reply -W "$(_ppctl_pool_ids "$ppctl" "$source")" ;;
	sim/del/ | sim/set/ | sim/gen/start | sim/gen/stop)
		[ $npos -eq 0 ] &&
			_ppctl_reply -W "$(_ppctl_sim_devs "$ppctl")" ;;
	xdp/attach/ | xdp/detach/ | xdp/status/)
		[ $npos -eq 0 ] && _ppctl_reply -W "$(_ppctl_ifnames)" ;;
	esac
}

complete -F _ppctl ppctl
