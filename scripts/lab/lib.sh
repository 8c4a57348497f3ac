# Shared helpers for the lab scripts (sourced, not run).

# The Debian 6.1 amd64 kernel the lab boots: LAB_KVER if set, else the newest
# installed 6.1 kernel whose headers are installed too (modules are built
# against those headers, so both must match).
lab_kver() {
	if [ -n "${LAB_KVER:-}" ]; then
		echo "$LAB_KVER"
		return
	fi
	local v best=""
	for v in $(ls /lib/modules 2>/dev/null | grep -E '^6\.1\.[0-9]+-[0-9]+-amd64$' | sort -V); do
		[ -f "/boot/vmlinuz-$v" ] && [ -d "/lib/modules/$v/build" ] && best=$v
	done
	if [ -z "$best" ]; then
		echo "lab: no Debian 6.1 amd64 kernel with headers installed; run scripts/deps.sh" >&2
		return 1
	fi
	echo "$best"
}

# Lines of a guest kernel log that fail a lab run.
LAB_FORBIDDEN='BUG:|WARNING:|Oops|refcount_t|list_del corruption|general protection|ppkit.*leak|page_pool.*(stalled|leak)|kmemleak: [0-9]+ new suspected|Kernel panic|soft lockup|hung_task|rcu.*stall'
