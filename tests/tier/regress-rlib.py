#!/usr/bin/env python3
"""scripts/regress/rlib.py's logic on the host, without a guest: the
windows that cannot be used and their re-measurement, the interval of a
ratio and its verdict (a reversed seed fails, unless it is a named expected
deviation), the mechanism checks, and summary.py's table.

    tests/tier/regress-rlib.py      (make check; TAP-like lines, exit 1 on a failure)

REGRESS_DIR=DIR takes rlib.py and summary.py from DIR instead (e.g. an
older tree's scripts/regress, to see these tests fail against it).
"""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import traceback

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DIR = os.environ.get("REGRESS_DIR", os.path.join(ROOT, "scripts", "regress"))
sys.path.insert(0, DIR)
import rlib  # noqa: E402

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def counters(cache=0, ring=0, stack=0, alloc=0, **more):
    return dict({"pages_from_cache": cache, "pages_from_ring": ring,
                 "pages_from_stack": stack, "pages_from_alloc": alloc}, **more)


def report_fails(b, why):
    """b.report() exits non-zero, naming WHY"""
    try:
        quiet(b.report)
    except SystemExit as e:
        assert e.code and why in str(e.code), e.code
    else:
        raise AssertionError(f"report() did not fail ({why})")


@case
def interval_with_a_reset_is_not_usable():
    """a `stats --interval` window with reset: true and null deltas: no hit
    rate, no crash, and the reason"""
    doc = {"pools": [{"id": 1, "ifname": "sim0", "reset": True, "delta": None},
                     {"id": 2, "ifname": "sim0", "reset": False,
                      "delta": {k: None for k in rlib.PAGE_SOURCES}}]}
    assert rlib.hit_rate(doc, "sim0") is None
    assert rlib.interval_problem(doc, "sim0") == "reset"
    ok = {"pools": [{"id": 1, "ifname": "sim0", "reset": False,
                     "delta": counters(cache=90, alloc=10)}]}
    assert rlib.interval_problem(ok, "sim0") is None
    assert abs(rlib.hit_rate(ok, "sim0") - 0.9) < 1e-12
    assert rlib.interval_problem({"pools": []}, "sim0") == "pool missing"
    assert rlib.interval_problem({"pools": []}, "sim0", require=False) is None


@case
def snapshots_classify_created_destroyed_and_reset_pools():
    """pool snapshots around a window: a pool created, destroyed or
    re-created (a counter went down) in it makes the window unusable"""
    a = {1: counters(cache=10, alloc=5)}
    b = {1: counters(cache=20, alloc=5)}
    assert rlib.snapshot_problem(a, b) is None
    assert rlib.snapshot_problem(a, {}) == "pool destroyed"
    assert rlib.snapshot_problem(a, {**b, 2: counters()}) == "pool created"
    assert rlib.snapshot_problem(a, {1: counters(cache=3)}) == "reset"
    assert rlib.snapshot_problem(None, b) == "no pool snapshot"


def bench(tmp, runs=3, retries=None, checks=None, metrics=()):
    # only what a case needs, so that an older Bench runs as far as it can
    more = {"checks": checks} if checks else {}
    b = rlib.Bench("unit", "unit test", ["a", "b"],
                   [("a/b", "a", "b", 1.4, "a seed above 1")], "pps", "packets/s",
                   metrics=metrics, **more)
    b.parse(["--runs", str(runs), "--out", tmp, "--seconds", "0.01"] +
            (["--retries", str(retries)] if retries is not None else []))
    b.plot = lambda path: None
    return b


def quiet(fn, *args):
    with contextlib.redirect_stdout(io.StringIO()):
        return fn(*args)


def run_without_sleeps(bench, measure):
    """bench.run() with a no-op setup and rlib's sleeps skipped, quietly."""
    rlib.time.sleep, sleep = (lambda s: None), rlib.time.sleep
    try:
        quiet(bench.run, lambda v: None, measure)
    finally:
        rlib.time.sleep = sleep


@case
def a_bad_window_is_measured_again_and_counted():
    """Bench.run measures a window again when measure() says why it cannot
    be used, and the JSON counts it per variant with the reason"""
    with tempfile.TemporaryDirectory() as tmp:
        b = bench(tmp)
        bad = {"a": ["reset", "short transfer"]}

        def measure(v):
            why = bad.get(v, []).pop(0) if bad.get(v) else None
            return {"value": 0.0 if why else (2.0 if v == "a" else 1.0), "invalid": why}

        run_without_sleeps(b, measure)
        doc = quiet(b.report)
        row = [r for r in doc["rows"] if r["variant"] == "a" and "samples" in r][0]
        assert row["samples"] == [2.0, 2.0, 2.0], row
        assert row["remeasured"] == 2, row
        assert row["remeasure_reasons"] == {"reset": 1, "short transfer": 1}, row
        assert row["lost_runs"] == 0
        with open(os.path.join(tmp, "unit.json")) as f:
            assert json.load(f)["rows"][0]["remeasured"] == 2


@case
def a_window_bad_every_time_is_lost_not_a_crash():
    """after --retries a run that is still unusable keeps no value: its
    ratio leaves it out, and the report says so"""
    with tempfile.TemporaryDirectory() as tmp:
        b = bench(tmp, runs=3, retries=1)
        n = {"b": 0}

        def measure(v):
            if v == "b":
                n["b"] += 1
                if n["b"] <= 2:     # run 1's window and its one retry
                    return {"value": None, "invalid": "pool destroyed"}
            return {"value": 3.0 if v == "a" else 2.0}

        run_without_sleeps(b, measure)
        doc = quiet(b.report)
        row = [r for r in doc["rows"] if r["variant"] == "b" and "samples" in r][0]
        assert row["lost_runs"] == 1 and row["remeasured"] == 2 and row["runs"] == 2, row
        r = doc["ratios"]["a/b"]
        assert r["per_run"] == [1.5, 1.5] and r["ratio"] == 1.5, r


@case
def median_interval_is_exact_order_statistics():
    """the interval for the median: [min, max] at 75% for 3 runs, 93.75%
    for 5, the first 95% one from 6 runs, x(2)..x(8) for 9"""
    assert rlib.median_interval([3, 1, 2]) == (1, 3, 0.75)
    lo, hi, cov = rlib.median_interval([5, 1, 4, 2, 3])
    assert (lo, hi) == (1, 5) and abs(cov - 0.9375) < 1e-12
    lo, hi, cov = rlib.median_interval(list(range(6)))
    assert (lo, hi) == (0, 5) and abs(cov - 0.96875) < 1e-12
    lo, hi, cov = rlib.median_interval(list(range(1, 10)))
    assert (lo, hi) == (2, 8) and cov >= 0.95, (lo, hi, cov)
    assert rlib.median_interval([]) is None


@case
def verdict_comes_from_the_interval_not_the_point():
    """a median above 1 whose interval contains 1.0 is not distinguishable
    from 1.0; clear of 1.0 it is the seed's side or the opposite one"""
    assert rlib.verdict(0.95, 1.30, 1.4) == "not distinguishable from 1.0"
    assert rlib.verdict(1.05, 1.30, 1.4) == "same"
    assert rlib.verdict(0.80, 0.97, 1.4) == "opposite"
    assert rlib.verdict(0.80, 0.97, 0.99) == "same"
    assert rlib.verdict(1.01, 1.02, None) == "above 1.0"
    assert rlib.verdict(None, None, 1.4) == "no data"
    s = rlib.ratio_summary([1.22, 0.98, 1.05], 1.4)
    assert s["ratio"] == 1.05 and s["verdict"] == "not distinguishable from 1.0", s
    assert (s["ci_low"], s["ci_high"]) == (0.98, 1.22)


@case
def mechanism_counts_per_packet():
    """per_packet(): bytes copied, pages allocated and mapped, far pages and
    bytes synced for the device, each over the window's packets"""
    b0 = {"packets": 100, "bytes": 150000, "copy_bytes": 0, "page_allocs": 7, "dma_maps": 7,
          "far_pages": 0, "rx_ppb_pages_allocated": 512, "rx_native_pages_allocated": 0,
          "pools": {1: counters(sync_for_device_bytes=1000, sync_for_device=10)}}
    b1 = dict(b0, packets=1100, bytes=1150000, copy_bytes=1000000, page_allocs=1007,
              dma_maps=1007, far_pages=1000, rx_ppb_pages_allocated=512,
              pools={1: counters(sync_for_device_bytes=1000 + 1518 * 1010,
                                 sync_for_device=10 + 1010)})
    c = rlib.per_packet(b0, b1, "none")
    assert c["page_allocs_per_packet"] == 1.0 and c["dma_maps_per_packet"] == 1.0, c
    assert c["copy_bytes_per_packet"] == c["rx_bytes_per_packet"] == 1000.0, c
    assert c["far_pages_per_packet"] == 1.0
    c = rlib.per_packet(b0, b1, "ppkit")
    assert c["page_allocs_per_packet"] == 0.0 and c["sync_dev_bytes_per_sync"] == 1518.0, c
    assert c["sync_dev_bytes_per_packet"] == 1518.0 * 1.01, c
    assert rlib.per_packet(b0, dict(b1, packets=100), "ppkit") == {}
    assert rlib.queue_sum({"rx0_far_pages": 2, "rx1_far_pages": 3, "tx0_packets": 9},
                          "far_pages") == 5


@case
def mechanism_checks_fail_when_counts_do_not_differ_as_the_seed_says():
    """evaluate_checks(): within bounds (numbers or another metric) passes,
    outside fails, unmeasured fails in the lab and is n/a on a board"""
    checks = rlib.alloc_checks("none", ["ppkit"]) + [
        rlib.check("copy: all copied", "copy", "copy_bytes_per_packet",
                   "rx_bytes_per_packet", "rx_bytes_per_packet")]
    med = {"none": {"page_allocs_per_packet": 1.0, "dma_maps_per_packet": 1.0},
           "ppkit": {"page_allocs_per_packet": 0.0, "dma_maps_per_packet": 0.0},
           "copy": {"copy_bytes_per_packet": 1514.0, "rx_bytes_per_packet": 1514.0}}
    assert all(c["result"] == "pass" for c in rlib.evaluate_checks(checks, med))
    med["ppkit"]["page_allocs_per_packet"] = 1.0      # no recycling: as without a pool
    med["copy"]["copy_bytes_per_packet"] = 0.0
    res = {(c["variant"], c["metric"]): c["result"] for c in rlib.evaluate_checks(checks, med)}
    assert res[("ppkit", "page_allocs_per_packet")] == "FAIL", res
    assert res[("copy", "copy_bytes_per_packet")] == "FAIL", res
    assert res[("ppkit", "dma_maps_per_packet")] == "pass", res
    del med["none"]["dma_maps_per_packet"]
    res = {(c["variant"], c["metric"]): c["result"]
           for c in rlib.evaluate_checks(checks, med, required=False)}
    assert res[("none", "dma_maps_per_packet")] == "n/a", res
    res = {(c["variant"], c["metric"]): c["result"] for c in rlib.evaluate_checks(checks, med)}
    assert res[("none", "dma_maps_per_packet")] == "FAIL", res


@case
def a_failed_check_fails_the_script_after_the_json():
    """Bench.report() writes the JSON with each check's result, then exits
    non-zero when one failed"""
    with tempfile.TemporaryDirectory() as tmp:
        b = bench(tmp, runs=2, metrics=[("page_allocs_per_packet", "allocs", "{:.3f}")],
                  checks=[rlib.check("a recycles", "a", "page_allocs_per_packet", None, 0.01)])
        run_without_sleeps(b, lambda v: {"value": 1.0,
                                          "metrics": {"page_allocs_per_packet": 1.0}})
        report_fails(b, "a recycles")
        with open(os.path.join(tmp, "unit.json")) as f:
            c = json.load(f)["checks"][0]
        assert c["result"] == "FAIL" and c["observed"] == 1.0, c


@case
def summary_gives_interval_and_verdict_for_every_ratio():
    """summary.py: a document without intervals (stmmac_orangepi.py's) gets
    them from its samples; a median of 0.976 whose runs straddle 1.0 is not
    "opposite" but not distinguishable; a failed check fails it"""
    with tempfile.TemporaryDirectory() as tmp:
        doc = {"name": "stmmac-orangepi",
               "rows": [{"variant": "patched", "metric": "rx_mbit", "median": 97.6,
                         "runs": 5, "samples": [97.6, 110.0, 90.0, 105.0, 95.0]},
                        {"variant": "unpatched", "metric": "rx_mbit", "median": 100.0,
                         "runs": 5, "samples": [100.0, 100.0, 100.0, 100.0, 100.0]}],
               "ratios": {"RX patched/unpatched": {"a": "patched", "b": "unpatched",
                                                  "ratio": 0.976, "seed": 1.40,
                                                  "seed_source": "seed 001"}}}
        with open(os.path.join(tmp, "stmmac-orangepi.json"), "w") as f:
            json.dump(doc, f)
        r = subprocess.run([sys.executable, os.path.join(DIR, "summary.py"), tmp],
                           capture_output=True, text=True)
        line = [x for x in r.stdout.splitlines() if "RX patched/unpatched" in x]
        assert r.returncode == 0 and line, (r.returncode, r.stdout, r.stderr)
        assert "not distinguishable from 1.0" in line[0] and "[0.900, 1.100]" in line[0], line
        doc = {"name": "drop", "rows": [], "ratios": {},
               "checks": [dict(rlib.check("ppkit recycles", "ppkit", "page_allocs_per_packet",
                                          None, 0.01), observed=1.0, bounds=[None, 0.01],
                               result="FAIL")]}
        with open(os.path.join(tmp, "drop.json"), "w") as f:
            json.dump(doc, f)
        r = subprocess.run([sys.executable, os.path.join(DIR, "summary.py"), tmp],
                           capture_output=True, text=True)
        assert r.returncode == 1 and "ppkit recycles" in r.stdout, (r.returncode, r.stdout)


@case
def a_reversed_seed_fails_unless_it_is_a_named_expected_deviation():
    """judge(): "opposite" to the seed is a FAIL, except a ratio of
    EXPECTED_OPPOSITE in the lab (never on a board); other verdicts pass"""
    assert rlib.judge("drop", "ppkit/none", "opposite") == ("FAIL", "opposite to the seed")
    assert rlib.judge("drop", "ppkit/none", "same") == ("pass", "")
    assert rlib.judge("drop", "ppkit/none", "not distinguishable from 1.0")[0] == "pass"
    assert rlib.EXPECTED_OPPOSITE, "the list of expected deviations is empty"
    (name, label), why = next(iter(rlib.EXPECTED_OPPOSITE.items()))
    assert why and rlib.judge(name, label, "opposite") == ("expected", why)
    assert rlib.judge(name, label, "opposite", "board")[0] == "FAIL"


@case
def a_script_whose_ratio_is_opposite_to_the_seed_fails_after_the_json():
    """Bench.report(): A slower than B in every run against a seed of 1.4
    (A faster) is "opposite": the JSON says FAIL, then the script exits
    non-zero naming the ratio"""
    with tempfile.TemporaryDirectory() as tmp:
        b = bench(tmp, runs=3)
        run_without_sleeps(b, lambda v: {"value": 1.0 if v == "a" else 2.0})
        report_fails(b, "a/b: opposite to the seed")
        with open(os.path.join(tmp, "unit.json")) as f:
            r = json.load(f)["ratios"]["a/b"]
        assert r["verdict"] == "opposite" and r["judgement"] == "FAIL", r


@case
def summary_fails_on_a_reversed_seed_and_names_an_expected_one():
    """summary.py on synthetic results: a ratio wholly below 1.0 against a
    seed above it fails the summary (exit 1, the ratio named); the same
    verdict for a ratio of EXPECTED_OPPOSITE passes, printed as expected"""
    (name, label), why = next(iter(rlib.EXPECTED_OPPOSITE.items()))

    def doc(name, label):
        return {"name": name, "mode": "lab",
                "rows": [{"variant": "a", "metric": "pps", "median": 1.0, "runs": 6,
                          "samples": [1.0, 1.01, 0.99, 1.0, 1.02, 0.98]},
                         {"variant": "b", "metric": "pps", "median": 1.2, "runs": 6,
                          "samples": [1.2] * 6}],
                "ratios": {label: {"a": "a", "b": "b", "seed": 1.4, "seed_source": "seed"}}}

    def summary(tmp):
        r = subprocess.run([sys.executable, os.path.join(DIR, "summary.py"), tmp],
                           capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr

    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "drop.json"), "w") as f:
            json.dump(doc("drop", "ppkit/none"), f)
        rc, out = summary(tmp)
        line = [x for x in out.splitlines() if "| ppkit/none |" in x]
        assert rc == 1 and line and "opposite" in line[0] and "FAIL" in line[0], (rc, out)
        assert "drop: ppkit/none" in out.splitlines()[-1], out
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, f"{name}.json"), "w") as f:
            json.dump(doc(name, label), f)
        rc, out = summary(tmp)
        line = [x for x in out.splitlines() if f"| {label} |" in x]
        assert rc == 0 and line and "expected" in line[0] and why in line[0], (rc, out)


def main():
    print(f"1..{len(CASES)}")
    failed = 0
    for i, fn in enumerate(CASES, 1):
        what = fn.__doc__.split("\n")[0].strip() if fn.__doc__ else fn.__name__
        try:
            fn()
            print(f"ok {i} - {fn.__name__}")
        except (Exception, SystemExit):  # noqa: BLE001 - every failure is a case's result
            failed += 1
            print(f"not ok {i} - {fn.__name__}: {what}")
            for line in traceback.format_exc().splitlines():
                print(f"# {line}")
    print(f"# {len(CASES) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
