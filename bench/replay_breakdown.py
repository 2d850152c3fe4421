#!/usr/bin/env python3
"""Where a message's timer cost goes, by function, less the no-timer run.

Replay (callgrind files of `replay --out DIR`):
    python3 bench/replay_breakdown.py DIR CONNS [TOP [MEASURED]]
  exclusive costs per message of the measured phase (inlined callees count
  where they were inlined), summed over call sites.

By what the work is for (clock, task memory, timer state, lock + slab +
wheel, due words, wakers, driver), one column per backend:
    python3 bench/replay_breakdown.py --categories DIR CONNS [MEASURED]

Atomic read-modify-writes (lock-prefixed instructions and xchg with memory),
which the counts above price as one instruction each, per message less the
no-timer replay, by function (the files need `--dump-instr=yes`, which
`replay` passes):
    python3 bench/replay_breakdown.py --atomics DIR CONNS [MEASURED]

Real time (`perf record -e cpu-clock -g -o DIR/perf-IMP.data` around one
`compare --only server --server-rounds 1 --imps IMP` run, IMP in none,
hashwheel, tokio; its stdout in DIR/perf-IMP.out):
    python3 bench/replay_breakdown.py --perf DIR [TOP]
  each symbol's share of the samples times the run's process CPU per
  message, less the no-timer run's; by what it is for:
    python3 bench/replay_breakdown.py --perf-categories DIR"""
import functools, os, re, subprocess, sys
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

def perf_symbols(d, imp, kernel=False):
    out = subprocess.run(["perf", "report", "-i", f"{d}/perf-{imp}.data", "--no-children",
                          "--sort", "symbol", "--stdio", "-g", "none", "--percent-limit", "0"],
                         capture_output=True, text=True, check=True).stdout
    run = open(f"{d}/perf-{imp}.out").read()
    cpu = float(re.search(r"\s(\d+) ns/msg,", run).group(1))
    syms = defaultdict(float)
    for line in out.splitlines():
        m = re.match(r"^\s+([\d.]+)%\s+\[([.k])\]\s+(.*?)\s*$", line)
        if m:
            name = "[kernel]" if kernel and m.group(2) == "k" else m.group(3)
            syms[name] += float(m.group(1)) / 100 * cpu
    return cpu, syms

def perf_main(d, top):
    base_cpu, base = perf_symbols(d, "none")
    for imp in ["hashwheel", "tokio"]:
        cpu, syms = perf_symbols(d, imp)
        rows = sorted(((v - base.get(k, 0.0), k) for k, v in syms.items()), key=lambda r: -abs(r[0]))
        print(f"\n## {imp}, real time: ns per message less the no-timer run ({cpu:.0f} - {base_cpu:.0f} = {cpu - base_cpu:.0f})")
        print("| ns/msg | symbol |")
        print("|---|---|")
        for v, k in rows[:top]:
            print(f"| {v:.1f} | `{k[:110]}` |")

def self_costs(path):
    """Self Ir per (object id, instruction address) of a callgrind file made
    with --dump-instr=yes, and the objects' paths by id. A cost line after a
    `calls=` line is the call's inclusive cost: its position counts, its
    cost does not."""
    costs, names = defaultdict(int), {}
    ob, addr, positions, call_line = None, 0, None, False
    for line in open(path):
        if line.startswith("positions:"):
            positions = line.split()[1:]
            if positions[0] != "instr":
                sys.exit(f"{path}: made without --dump-instr=yes")
        elif line.startswith(("ob=", "cob=")):
            # An object's path comes with its id where the id is first
            # used, which may be a call's target (`cob=`).
            m = re.match(r"c?ob=\((\d+)\)(?: (.*))?", line.strip())
            if m.group(2):
                names[m.group(1)] = m.group(2)
            if line.startswith("ob="):
                ob = m.group(1)
        elif line.startswith("calls="):
            call_line = True
        elif line[:1].isdigit() or line[:1] in "+-*":
            if positions is None:
                sys.exit(f"{path}: made without --dump-instr=yes")
            parts = line.split()
            p = parts[0]
            if p.startswith("0x"):
                addr = int(p, 16)
            elif p[0] in "+-":
                addr += int(p)
            elif p != "*":
                addr = int(p)
            if call_line:
                call_line = False
            elif len(parts) > len(positions):
                costs[(ob, addr)] += int(parts[len(positions)])
    return costs, names

@functools.lru_cache(maxsize=None)
def rmw_instructions(binary):
    """The atomic read-modify-writes of an object: each address and the
    function it is in. Cached: every backend's file names the same
    binary, which one objdump reads."""
    out = subprocess.run(["objdump", "-d", "-C", "--no-show-raw-insn", binary],
                         capture_output=True, text=True).stdout
    found, fn = {}, None
    for l in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.*)>:$", l)
        if m:
            fn = m.group(1)
            continue
        m = re.match(r"\s*([0-9a-f]+):\s+(.*)$", l)
        if m and (m.group(2).startswith("lock ") or (m.group(2).startswith("xchg") and "(" in m.group(2))):
            found[int(m.group(1), 16)] = fn
    return found

def rmws_by_function(path):
    costs, names = self_costs(path)
    # Addresses are the binary's as it was when valgrind ran: a rebuild
    # since moves them, and the count would name other instructions.
    for b in names.values():
        if os.path.exists(b) and os.path.getmtime(b) > os.path.getmtime(path):
            sys.exit(f"{b} was rebuilt after {path} was made: run replay again")
    objs = {ob: rmw_instructions(b) for ob, b in names.items()}
    by_fn = defaultdict(int)
    for (ob, addr), n in costs.items():
        fn = objs.get(ob, {}).get(addr)
        if fn is not None:
            by_fn[fn] += n
    return by_fn

def atomics(d, conns, msgs):
    base = rmws_by_function(f"{d}/replay-none-{conns}.callgrind")
    for b in ["hashwheel", "free", "tokio"]:
        f = rmws_by_function(f"{d}/replay-{b}-{conns}.callgrind")
        rows = sorted(((f.get(k, 0) - base.get(k, 0)) / msgs, k) for k in set(f) | set(base))
        rows = [r for r in rows if abs(r[0]) >= 0.005]
        rows.sort(key=lambda r: -abs(r[0]))
        print(f"\n## {b}, {conns} connections: atomic read-modify-writes per message, less the no-timer replay")
        print("| per message | function |")
        print("|---|---|")
        for v, k in rows:
            print(f"| {v:.2f} | `{k[:110]}` |")
        print(f"| {sum(v for v, _ in rows):.2f} | all |")

# What each function's cost is for, hashwheel's and tokio's side by side.
CATEGORIES = [
    ("clock reads and deadline arithmetic",
     r"clock::now|Clock::now|Timespec|Instant>::|Instant as core::ops|Instant::now|Instant::checked_add|clock_gettime"),
    ("timer futures moved into and written in the task's memory",
     r"^__mem(cpy|move)|replay::connection::\{\{closure\}\}|replay::.*Timers"),
    ("timeout future: made, polled, dropped",
     r"Timeout<.*>::poll|timeout::<impl|timers::<impl .*>::timeout|hashwheel::timeout::timeout|poll_delay|Sleep::new_timeout|Sleep::until|drop_in_place<.*Timer"),
    ("default-wheel or runtime lookup", r"registry::|claim_default|Handle::try_current|Handle::current|drop_in_place<tokio::runtime::handle::Handle>|task::id::try_id"),
    ("timer state: entry or Sleep touched, waker registered",
     r"OwnedEntry|ShardRef|coop::budgeted|drop_in_place<hashwheel::sleep::Sleep>|Sleep as core::future|Sleep::poll_|Sleep::reset|Timer::reset|AtomicWaker::register_by_ref|TimerEntry"),
    ("lock, slab and wheel: file, move, unfile",
     r"engine::shard::|HashedWheel|wheel::Wheel::(insert|remove)|clear_entry|reregister"),
    ("due words", r"due_word"),
    ("waker clones and drops", r"clone_waker|drop_waker"),
    ("driver passes, parks and wake-ups",
     r"park|Driver::|wheel::Wheel::(poll|next_expiration)|mio::|unpark|write|epoll|defer|process_at|fire|wake"),
]

def categories(d, conns, msgs):
    base = load(f"{d}/replay-none-{conns}.callgrind")
    cols = {}
    for b in ["hashwheel", "free", "tokio"]:
        f = load(f"{d}/replay-{b}-{conns}.callgrind")
        sums = defaultdict(lambda: [0.0] * 6)
        for name in set(f) | set(base):
            v = [(f.get(name, [0]*6)[i] - base.get(name, [0]*6)[i]) / msgs for i in range(6)]
            cat = next((c for c, rx in CATEGORIES if re.search(rx, name)), "the rest (scheduler, task harness)")
            sums[cat] = [a + b for a, b in zip(sums[cat], v)]
        cols[b] = sums
    print(f"\n## {conns} connections: est. cycles (Ir / D1 misses / LL misses) per message, less the no-timer replay")
    print("| | hashwheel | hashwheel free fns | tokio::time |")
    print("|---|---|---|---|")
    cell = lambda v: f"{est(v):.0f} ({v[0]:.0f} / {v[1]+v[2]:.2f} / {v[3]+v[4]+v[5]:.2f})"
    for c in [c for c, _ in CATEGORIES] + ["the rest (scheduler, task harness)"]:
        print(f"| {c} | " + " | ".join(cell(cols[b][c]) for b in cols) + " |")
    tot = {b: [sum(v[i] for v in cols[b].values()) for i in range(6)] for b in cols}
    print("| all | " + " | ".join(cell(tot[b]) for b in cols) + " |")

def perf_categories(d):
    base_cpu, base = perf_symbols(d, "none", kernel=True)
    cols = {}
    for imp in ["hashwheel", "tokio"]:
        cpu, syms = perf_symbols(d, imp, kernel=True)
        sums = defaultdict(float)
        for name in set(syms) | set(base):
            v = syms.get(name, 0.0) - base.get(name, 0.0)
            cat = "kernel: scheduling, syscalls" if name == "[kernel]" else next(
                (c for c, rx in CATEGORIES if re.search(rx, name)), "the rest (scheduler, task harness)")
            sums[cat] += v
        cols[imp] = (cpu, sums)
    print(f"\n## real time: ns per message by what it is for, less the no-timer run ({base_cpu:.0f} ns/msg)")
    print("| | hashwheel | tokio::time |")
    print("|---|---|---|")
    for c in [c for c, _ in CATEGORIES] + ["the rest (scheduler, task harness)", "kernel: scheduling, syscalls"]:
        print(f"| {c} | " + " | ".join(f"{cols[i][1][c]:.1f}" for i in cols) + " |")
    print("| all | " + " | ".join(f"{cols[i][0] - base_cpu:.0f}" for i in cols) + " |")

def main():
    if sys.argv[1] == "--perf-categories":
        return perf_categories(sys.argv[2])
    if sys.argv[1] == "--categories":
        return categories(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 200000)
    if sys.argv[1] == "--atomics":
        return atomics(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 200000)
    if sys.argv[1] == "--perf":
        return perf_main(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 25)
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
