#!/usr/bin/env python3
"""Summarise build/regress/*.json: every A/B ratio with its interval and
verdict against the seed, the windows measured again, and the mechanism
checks (Documentation/regress.rst).  Exits 1 if a mechanism check failed
or a ratio is opposite to its seed (not an expected deviation)."""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rlib  # noqa: E402


def ratio_of(doc, label, r):
    """The ratio's figures: rlib's own (per_run, interval, verdict), or,
    for a document without them (stmmac_orangepi.py), computed the same way
    from the per-run samples of its variants, paired by run; judged here
    again (rlib.judge(): an "opposite" verdict fails unless expected)."""
    if not ("verdict" in r and "per_run" in r):
        samples = {row["variant"]: row["samples"] for row in doc["rows"] if "samples" in row}
        per_run = rlib.run_ratios(samples.get(r["a"]) or [], samples.get(r["b"]) or [])
        r = dict(r, **rlib.ratio_summary(per_run, r.get("seed")))
    j, why = rlib.judge(doc["name"], label, r["verdict"], doc.get("mode", "lab"))
    return dict(r, judgement=j, expected_deviation=why)


def main(out):
    docs = []
    for path in sorted(glob.glob(os.path.join(out, "*.json"))):
        with open(path) as f:
            doc = json.load(f)
        if "ratios" in doc:
            docs.append(doc)

    print("| scenario | ratio (median of per-run ratios) | here | interval | level | runs "
          "| seed | verdict | seed source |")
    print("|---|---|---|---|---|---|---|---|---|")
    reversed_ = []
    for doc in docs:
        for label, r in doc["ratios"].items():
            r = ratio_of(doc, label, r)
            if r["judgement"] == "FAIL":
                reversed_.append(f"{doc['name']}: {label}")
            print(f"| {doc['name']} | {label} | {rlib.fmt_ratio(r['ratio'])} | "
                  f"{rlib.fmt_interval(r)} | {rlib.fmt_level(r)} | {len(r['per_run'])} | "
                  f"{rlib.fmt_ratio(r.get('seed'))} | {rlib.fmt_verdict(r)} | "
                  f"{r.get('seed_source', '')} |")
    print("\nThe interval: order statistics of the per-run ratios, a distribution-free "
          "interval for their median at the level given (95% from 6 runs; fewer runs "
          "give [min, max] at a lower level).  Verdict by the interval against 1.0; "
          "\"opposite\" to the seed fails, unless the ratio is one of the expected "
          "deviations (scripts/regress/rlib.py EXPECTED_OPPOSITE).")

    print("\n| scenario | mechanism check | variant | per packet | expected | result |")
    print("|---|---|---|---|---|---|")
    for doc in docs:
        for c in doc.get("checks", []):
            print(f"| {doc['name']} | {c['text']} | {c['variant']} | "
                  f"{c['metric']} {rlib.fmt_count(c['observed'])} | "
                  f"{rlib.fmt_bounds(c['bounds'])} | {c['result']} |")

    print("\n| scenario | variant | runs | re-measured | why | runs lost |")
    print("|---|---|---|---|---|---|")
    for doc in docs:
        for row in doc["rows"]:
            if "samples" not in row:
                continue
            why = ", ".join(f"{k} {n}x" for k, n in row.get("remeasure_reasons", {}).items())
            print(f"| {doc['name']} | {row['variant']} | {row['runs']} | "
                  f"{row.get('remeasured', '-')} | {why or '-'} | {row.get('lost_runs', '-')} |")
        for s in doc.get("short_transfers", []):
            print(f"| {doc['name']} | short transfer left out | | | {s} | |")

    print("\n| scenario | figure | median |")
    print("|---|---|---|")
    for doc in docs:
        for row in doc["rows"]:
            if row["metric"] == "alloc_hit_rate":
                print(f"| {doc['name']} | hit rate {row['variant']} | {row['median'] * 100:.3f}% |")
            elif "samples" not in row:
                print(f"| {doc['name']} | {row['metric']} {row['variant']} | "
                      f"{row['median']:.4f} |")
    failed = [f"{doc['name']}: {c['text']}" for doc in docs for c in doc.get("checks", [])
              if c["result"] == "FAIL"]
    if failed:
        print(f"\nmechanism checks failed: {'; '.join(failed)}")
    if reversed_:
        print(f"\nratios opposite to their seed: {'; '.join(reversed_)}")
    return 1 if failed or reversed_ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "build/regress"))
