# shellcheck shell=bash
# Sourced by the stress scenarios: SLOW, the factor of every in-guest
# deadline.  LAB_SLOW, which scripts/lab/run passes in on the debug kernel
# (the factor of its own timeout there, default 4); without it, 4 on a
# KASAN kernel, else 1.  Python scenarios: reload.py's slow().
if [[ "${LAB_SLOW:-}" =~ ^[1-9][0-9]*$ ]]; then
	SLOW=$LAB_SLOW
elif grep -q ' kasan_quarantine_put$' /proc/kallsyms 2> /dev/null; then
	SLOW=4
else
	SLOW=1
fi
echo "# in-guest deadlines x$SLOW"
