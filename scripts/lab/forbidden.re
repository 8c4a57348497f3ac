# Lines of a guest kernel log that fail a test: one extended regex on the
# first line that is not a comment, read by grep -E (scripts/lab/lib.sh,
# LAB_FORBIDDEN) and by Python's re (scripts/lab/forbidden.py), so it keeps
# to what both understand.  SLUB's own checks (slub_debug) report as
# "BUG <cache> (Tainted: ...): what", with no colon after BUG.  kmemleak's
# verdict is the report of the scan at the end of a lab run
# (scripts/lab/init), not a log line.
BUG:|BUG [^ ]+ \((Not tainted|Tainted)|WARNING:|Oops|refcount_t|list_del corruption|general protection|ppkit.*leak|page_pool.*(stalled|leak)|UBSAN:|unregister_netdevice: waiting|Kernel panic|soft lockup|hung_task|rcu.*stall
