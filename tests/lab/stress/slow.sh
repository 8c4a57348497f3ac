# shellcheck shell=bash
# Sourced by the stress scenarios: SLOW, the factor of every in-guest
# deadline.  LAB_SLOW when the guest has it; scripts/lab/run does not pass
# it in (it lengthens only its own timeout), so on a KASAN kernel (the
# debug kernel: scripts/lab/debug-kernel.sh) the factor is run's default
# for it, 4; else 1.  Python scenarios: reload.py's slow().
if [[ "${LAB_SLOW:-}" =~ ^[1-9][0-9]*$ ]]; then
	SLOW=$LAB_SLOW
elif grep -q ' kasan_quarantine_put$' /proc/kallsyms 2> /dev/null; then
	SLOW=4
else
	SLOW=1
fi
echo "# in-guest deadlines x$SLOW"
