#!/usr/bin/env python3
"""Writes the "get" cases of OrderOracle.java, one per line, to stdout.

Each case is a producer znode's offsets files in znode order, separated by
"/", each with its buckets in file order (partitions ascending, then bucket
ids), as a coordinator reads them. Deterministic (fixed seed); run from
javaorder/:

    python3 testdata/java/get_cases.py > /tmp/get_cases
    java --add-opens java.base/java.util=ALL-UNNAMED testdata/java/OrderOracle.java \
        < /tmp/get_cases > testdata/java_get_order.txt          # JDK 17
    /usr/lib/jvm/temurin-25-jdk-amd64/bin/java --add-opens java.base/java.util=ALL-UNNAMED \
        testdata/java/OrderOracle.java < /tmp/get_cases > /tmp/jdk25
    grep -vxFf testdata/java_get_order.txt /tmp/jdk25 > testdata/java_get_order_jdk25.txt
    for mode in 2 3; do java -XX:+UnlockExperimentalVMOptions -XX:hashCode=$mode \
        --add-opens java.base/java.util=ALL-UNNAMED testdata/java/OrderOracle.java < /tmp/get_cases; \
        done | grep -vxFf testdata/java_get_order.txt | sort -u > testdata/java_get_order_idhash.txt

java_get_order_jdk25.txt thus holds only the answers JDK 25 gives
differently, and java_get_order_idhash.txt those JDK 17 gives differently
when System.identityHashCode is a constant (-XX:hashCode=2) or a counter
(3) instead of random: the orders that depend on identity hash codes.
"""
import random

rng = random.Random(20261208)


def plain(table, buckets):
    return ["%d:%d" % (table, b) for b in sorted(buckets)]


def parted(table, parts):
    """parts: {partition id: [bucket ids]}, written in file order."""
    out = []
    for p in sorted(parts):
        out += ["%d:%d:%d" % (table, p, b) for b in sorted(parts[p])]
    return out


def case(*files):
    return "get " + " / ".join(" ".join(f) for f in files)


cases = []
add = cases.append

# Edge cases.
add("get")
add(case([]))
add(case([], []))
add(case(plain(7, [0])))
# One table: every size up to 100 buckets (the first map is sized for the
# first file; JDK 19 differs at 3, 6, 12, 24, 48, 96).
for n in range(1, 101):
    add(case(plain(12, range(n))))
for n in (128, 192, 255, 256, 257, 384, 500, 768, 1024, 1536):
    add(case(plain(rng.randrange(1, 5000), range(n))))
# One table, holes.
for _ in range(20):
    n = rng.randrange(1, 300)
    add(case(plain(rng.randrange(0, 100000), rng.sample(range(n * 2), n))))
# A first file of 3*2^k buckets, then other files.
for k in range(0, 6):
    s = 3 << k
    for more in (0, 1, s // 2, s, 3 * s):
        add(case(plain(3, range(s)), plain(4, range(more)) if more else []))
# Small first files, then big ones (the first map starts at 2, 4 or 8 bins).
for first in (1, 2, 3, 4, 5, 6):
    for second in (1, 5, 9, 20, 100, 700):
        add(case(plain(100, range(first)), plain(101, range(second))))
# Several tables, consecutive and random ids, in varied znode orders.
for ntables in (2, 3, 5, 12, 13, 14, 25, 26, 40, 49, 100, 130):
    for ids in ("consecutive", "random", "wide"):
        base = rng.randrange(0, 2000)
        if ids == "consecutive":
            tids = [base + i for i in range(ntables)]
        elif ids == "random":
            tids = rng.sample(range(1 << 20), ntables)
        else:
            tids = [rng.randrange(-(1 << 62), 1 << 62) for _ in range(ntables)]
        rng.shuffle(tids)
        files = []
        for t in tids:
            n = rng.choice((1, 2, 8, 16, 31, 64) if ntables < 40 else (1, 2, 3, 8))
            files.append(plain(t, range(n)))
        add(case(*files))
# The compat test's shape: log tables of 64 buckets, a partitioned table of
# three partitions of 16 buckets, one-bucket tables with unused ids.
for _ in range(6):
    base = rng.randrange(0, 50)
    parts = {p: [b for b in range(16) if (b + j) % 5] for j, p in enumerate(rng.sample(range(0, 40), 3))}
    files = [plain(base, range(64)), plain(base + 1, [0, 3, 17, 63]), parted(base + 2, parts),
             plain(900001, [3]), plain(900002, [0]), plain(900003, [1])]
    rng.shuffle(files)
    add(case(*files))
# Partitioned tables, partition ids of every sign.
for _ in range(16):
    files = []
    for _ in range(rng.randrange(1, 4)):
        np = rng.randrange(1, 30)
        pids = rng.sample(range(-50, 5000), np) if rng.random() < 0.5 else [rng.randrange(-(1 << 63), 1 << 63) for _ in range(np)]
        nb = rng.choice((1, 4, 8, 16))
        parts = {p: [b for b in range(nb) if rng.random() < 0.9] for p in pids}
        files.append(parted(rng.randrange(0, 3000), parts))
    add(case(*files))
# One table in two or three entries of the znode: the later file's offset,
# the first position.
for _ in range(15):
    t = rng.randrange(0, 100)
    a = rng.sample(range(64), rng.randrange(1, 40))
    b = rng.sample(range(64), rng.randrange(1, 40))
    files = [plain(t, a), plain(t + 1, range(8)), plain(t, b)]
    if rng.random() < 0.5:
        files.append(plain(t, rng.sample(range(128), 20)))
    add(case(*files))
# Many tables of one bucket (the grouped map resizes; computeIfAbsent's lazy
# resize).
for n in (11, 12, 13, 24, 25, 48, 49, 97, 200):
    add(case(*[plain(i * 7, [0]) for i in range(n)]))
    add(case(*[plain(i, [0, 1]) for i in range(n)]))
# Table ids equal modulo the grouped map's capacity (crowded bins, trees).
for mod in (16, 64, 128):
    add(case(*[plain(i * mod, [0]) for i in range(12)]))
# Equal TableBucket hashes: many partitions, consecutive ids with many
# buckets (tree bins; inexact cases).
add(case(parted(5, {p: range(12) for p in range(0, 260)})))
add(case(*[plain(300 + i, range(256)) for i in range(9)]))
for _ in range(3):
    tids = [700 + i for i in range(rng.randrange(9, 12))]
    rng.shuffle(tids)
    add(case(*[plain(t, [b for b in range(rng.randrange(250, 300)) if rng.random() < 0.97]) for t in tids]))
add(case(parted(5, {p: range(16) for p in range(0, 40)}), parted(6, {p: range(16) for p in range(40, 80)})))

for c in cases:
    print(c)
