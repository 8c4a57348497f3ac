#!/bin/bash
# contrib/ checked with Debian's promtool (scripts/deps.sh installs the
# prometheus package), for make check and make test:
#   - the example configuration and the rules load (promtool check config);
#   - the rules' unit tests pass (promtool test rules ppkit.rules.test.yml);
#   - each mutant below, a rule broken on purpose, fails them: the tests
#     would catch that change (a mutant that no longer applies is an error);
#   - every panel of contrib/grafana/ppkit.json has a query that parses, and
#     each ppkit:... series it reads is a recording rule of ppkit.rules.yml.
# Lines "ok N - ..." / "not ok N - ..."; SKIP (exit 77) without promtool.
# tests/lab/prometheus.sh runs them against a live Prometheus.
set -u
cd "$(dirname "$0")/../.." || exit 1
command -v promtool > /dev/null || { echo "SKIP: promtool is missing: run scripts/deps.sh (Debian's prometheus package)"; exit 77; }
. tests/lab/checks.sh
P=contrib/prometheus
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

check "promtool check config $P/prometheus.yml (and its rules)" \
	sh -c "promtool check config $P/prometheus.yml > $T/config.out 2>&1" || sed 's/^/# /' "$T/config.out"
promtool test rules "$P/ppkit.rules.test.yml" > "$T/test.out" 2>&1
rc=$?
sed 's/^/# /' "$T/test.out"
check "promtool test rules $P/ppkit.rules.test.yml" test $rc = 0

# mutant WHAT SED-SCRIPT: the rules with SED-SCRIPT applied must fail the tests
mutant() {
	mkdir -p "$T/m"
	cp "$P/ppkit.rules.test.yml" "$T/m/"
	sed "$2" "$P/ppkit.rules.yml" > "$T/m/ppkit.rules.yml"
	if cmp -s "$P/ppkit.rules.yml" "$T/m/ppkit.rules.yml"; then
		bad "mutant '$1': its sed script no longer changes the rules"
	elif promtool test rules "$T/m/ppkit.rules.test.yml" > "$T/m/out" 2>&1; then
		bad "mutant '$1' passes the tests"
	else
		ok "mutant '$1' fails the tests"
	fi
}
mutant "hit rate without pages from the stack" '/record: ppkit:pool_alloc_hit_ratio/,/record:/{/pages_from_stack/d}'
mutant "hit rate of an idle pool is NaN" 's|/ (ppkit:pool_pages_served:rate1m > 0)|/ ppkit:pool_pages_served:rate1m|'
mutant "a counter not there yet is not 0" 's/ or ppkit_pool_pages_allocated_total \* 0//'
mutant "recycle rate counts orphaned pages as recycled" 's/ppkit_pool_recycle_ring_total/ppkit_pool_pages_orphaned_total/'
mutant "left the driver without reclaimed pages" '/record: ppkit:pool_pages_left_driver/,/record:/{/pages_reclaimed/d}'
mutant "orphan rate as an increase" 's/rate(ppkit_pool_pages_orphaned_total\[1m\]) or/increase(ppkit_pool_pages_orphaned_total[1m]) or/'
mutant "held by the stack counts pages it let go" 's/expr: ppkit_pool_lent_held_pages/expr: ppkit_pool_lent_pages/'
mutant "detached pages of live pools too" 's/ppkit_pool_info{state="detached"}/ppkit_pool_info/'
mutant "low hit rate at 90%" 's/ppkit:pool_alloc_hit_ratio:rate1m < 0.5/ppkit:pool_alloc_hit_ratio:rate1m < 0.9/'
mutant "low hit rate without its 5 minutes" '/alert: PpkitLowHitRate/,/for:/s/for: 5m/for: 1m/'
mutant "a page held at any age" 's/ppkit_pool_lent_oldest_seconds > 300/ppkit_pool_lent_oldest_seconds > 0/'
mutant "a page's age read as ms" 's/ppkit_pool_lent_oldest_seconds > 300/ppkit_pool_lent_oldest_seconds > 300000/'
mutant "held pages without their minute" '/alert: PpkitPagesHeldByStack/,/for:/s/for: 1m/for: 0m/'
mutant "a detached pool that drains" '/and delta(ppkit:pool_detached_inflight_pages\[5m\]) >= 0/d'
mutant "orphaning without its 5 minutes" '/alert: PpkitPagesOrphaned/,/for:/s/for: 5m/for: 1m/'

# The dashboard's queries: each a recording rule of ppkit.rules.yml in a
# rules file of its own, which promtool parses.
if python3 - contrib/grafana/ppkit.json "$P/ppkit.rules.yml" "$T/panels.yml" <<'PY'
import json, re, sys, yaml
dash = json.load(open(sys.argv[1]))
records = {r["record"] for g in yaml.safe_load(open(sys.argv[2]))["groups"]
	   for r in g["rules"] if "record" in r}
rules, bad = [], 0
for p in dash["panels"]:
	exprs = [t.get("expr", "") for t in p.get("targets", [])]
	if not exprs or not all(exprs):
		print(f"# panel '{p['title']}' has no query"); bad += 1
	for e in exprs:
		for name in set(re.findall(r"ppkit:[a-z0-9_:]+", e)) - records:
			print(f"# panel '{p['title']}': {name} is no recording rule of ppkit.rules.yml"); bad += 1
		# Grafana's variables: $instance is a regex of hosts
		rules.append({"record": f"panel_{p['id']}", "expr": e.replace("$instance", ".*")})
yaml.safe_dump({"groups": [{"name": "panels", "rules": rules}]}, open(sys.argv[3], "w"))
print(f"# {len(dash['panels'])} panels, {len(rules)} queries")
sys.exit(1 if bad else 0)
PY
then
	check "every panel of contrib/grafana/ppkit.json has a query that parses" \
		sh -c "promtool check rules $T/panels.yml > $T/panels.out 2>&1" || sed 's/^/# /' "$T/panels.out"
else
	bad "every panel of contrib/grafana/ppkit.json reads recording rules that exist"
fi
echo "promtool: $pass passed, $failn failed"
[ $failn -eq 0 ]
