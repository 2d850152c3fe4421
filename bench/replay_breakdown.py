#!/usr/bin/env python3
"""Per-function cost per message of the replay's measured phase, each backend
against the no-timer replay: `python3 bench/replay_breakdown.py DIR CONNS [TOP [MEASURED]]`
after `replay --out DIR` (callgrind files). Exclusive costs, by function
(inlined callees count where they were inlined), summed over call sites."""
import re, subprocess, sys
from collections import defaultdict

EV = ["Ir", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw"]

def load(path):
    out = subprocess.run(["callgrind_annotate", "--threshold=100", "--inclusive=no", "--auto=no",
                          "--show=" + ",".join(EV), path],
                         capture_output=True, text=True, check=True).stdout
    fns = defaultdict(lambda: [0] * len(EV))
    for line in out.splitlines():
        m = re.match(r"^\s*([\d,.]+(?:\s+\([^)]*\))?(?:\s+[\d,.]+(?:\s+\([^)]*\))?)*)\s+(\S.*)$", line)
        if not m or ":" not in m.group(2) or "PROGRAM TOTALS" in line:
            continue
        nums = re.sub(r"\([^)]*\)", "", m.group(1)).split()
        if len(nums) != len(EV):
            continue
        name = m.group(2).split(":", 1)[1]
        name = re.sub(r" \[[^\]]*\]$", "", name)
        if re.search(r"\([\d,]+x\)$", name):
            continue
        for i, v in enumerate(nums):
            fns[name][i] += 0 if v == "." else int(v.replace(",", ""))
    return fns

def est(v):
    ir, d1mr, d1mw, ilmr, dlmr, dlmw = v
    return ir + 10 * (d1mr + d1mw) + 100 * (dlmr + dlmw + ilmr)

def main():
    d, conns = sys.argv[1], sys.argv[2]
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 25
    msgs = int(sys.argv[4]) if len(sys.argv) > 4 else 200000
    base = load(f"{d}/replay-none-{conns}.callgrind")
    for b in ["hashwheel", "free", "tokio"]:
        f = load(f"{d}/replay-{b}-{conns}.callgrind")
        rows = []
        for name in set(f) | set(base):
            v = [(f.get(name, [0]*6)[i] - base.get(name, [0]*6)[i]) / msgs for i in range(6)]
            rows.append((est(v), v, name))
        rows.sort(key=lambda r: -abs(r[0]))
        print(f"\n## {b}, {conns} connections: per message, less the no-timer replay")
        print("| est. cycles | Ir | D1 misses | LL misses | function |")
        print("|---|---|---|---|---|")
        tot = [0.0] * 6
        for r in rows:
            tot = [a + b for a, b in zip(tot, r[1])]
        for e, v, name in rows[:top]:
            print(f"| {e:.0f} | {v[0]:.0f} | {v[1]+v[2]:.2f} | {v[3]+v[4]+v[5]:.2f} | `{name[:110]}` |")
        print(f"| {est(tot):.0f} | {tot[0]:.0f} | {tot[1]+tot[2]:.2f} | {tot[3]+tot[4]+tot[5]:.2f} | all |")

main()
