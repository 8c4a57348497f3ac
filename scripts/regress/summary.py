#!/usr/bin/env python3
"""Summarise build/regress/*.json: every A/B ratio, here and in the seed."""
import glob
import json
import os
import statistics
import sys

out = sys.argv[1] if len(sys.argv) > 1 else "build/regress"
print("| scenario | ratio (median of per-run ratios) | here | seed | direction | seed source |")
print("|---|---|---|---|---|---|")
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    doc = json.load(open(path))
    if "ratios" not in doc:
        continue
    # the measured metric's rows carry the samples; the others are medians
    samples = {row["variant"]: row["samples"] for row in doc["rows"] if "samples" in row}
    for label, r in doc["ratios"].items():
        seed = r.get("seed")
        # the median of per-run ratios (see rlib.paired_ratio)
        pa, pb = samples.get(r["a"]) or [], samples.get(r["b"]) or []
        pairs = sorted(x / y for x, y in zip(pa, pb) if x and y)
        here = statistics.median(pairs) if pairs else r.get("ratio")
        if here is None:
            d = "no data"
        elif seed is None:
            d = "-"
        elif (seed >= 1) == (here >= 1) or abs(here - 1) < 0.02:
            d = "same" if (seed >= 1) == (here >= 1) else "flat"
        else:
            d = "opposite"
        print(f"| {doc['name']} | {label} | {here:.3f} | "
              f"{'-' if seed is None else f'{seed:.3f}'} | {d} | {r.get('seed_source', '')} |"
              if here is not None else
              f"| {doc['name']} | {label} | - | - | {d} | |")
    for row in doc["rows"]:
        if row["metric"] == "alloc_hit_rate":
            print(f"| {doc['name']} | hit rate {row['variant']} | {row['median'] * 100:.3f}% "
                  f"| | | |")
        elif "samples" not in row:
            print(f"| {doc['name']} | {row['metric']} {row['variant']} | {row['median']:.4f} "
                  f"| | | |")
