#!/usr/bin/env python3
"""Old build against new build of weft: `weft reduce` quotients on random tau-heavy LTSs.

Usage: scripts/reduce-diff.py OLD_WEFT NEW_WEFT [--count N] [--seed S] [--max-states K]

For each random LTS (several shapes: uniform random with many taus, tau trees over a few
bottom states, chains of bottom states with tau fans, blocks whose new bottom states each
lack a different label), runs both binaries with --equivalence branching and
divergence-preserving-branching, --branching-algorithm constellations, auto and
signatures-then-constellations, at 1 and 2 threads, and compares the written quotients
byte for byte (and the new build's quotient across algorithms and thread counts).
Exit status 1 on the first difference (the input is kept in /tmp/reduce-diff-fail.aut).
"""
import random
import subprocess
import sys
import tempfile
import os


def uniform(rng, n):
    labels = ["tau"] * rng.randint(2, 6) + ["a", "b", "c"][: rng.randint(1, 3)]
    edges = set()
    for _ in range(rng.randint(n, 3 * n)):
        x = rng.randrange(n)
        lab = rng.choice(labels)
        # Mostly downward taus (few tau cycles), some upward ones.
        if lab == "tau" and rng.random() < 0.85 and x > 0:
            y = rng.randrange(x)
        else:
            y = rng.randrange(n)
        edges.add((x, lab, y))
    return n, sorted(edges)


def tau_tree(rng, n):
    k = max(2, n // 5)
    labels = ["a", "b", "c", "d"]
    edges = set()
    for x in range(k):
        for lab in labels:
            if rng.random() < 0.5:
                edges.add((x, lab, rng.randrange(k)))
    for x in range(k, n):
        for _ in range(rng.randint(1, 3)):
            edges.add((x, "tau", rng.randrange(x)))
        if rng.random() < 0.3:
            edges.add((x, rng.choice(labels), rng.randrange(n)))
    return n, sorted(edges)


def lacking(rng, n):
    # k bottom-ish nodes x_i that reach all labels but one via a tau to a hub-like node,
    # chains that separate one step at a time.
    k = max(2, n // 6)
    labels = ["l%d" % i for i in range(rng.randint(2, 6))]
    edges = set()
    chain = list(range(k))
    for i in range(1, k):
        edges.add((i, "a", i - 1))
    nxt = k
    for i in range(k):
        x, y = nxt, nxt + 1
        nxt += 2
        edges.add((x, "tau", y))
        miss = rng.choice(labels)
        for lab in labels:
            if lab != miss:
                edges.add((x, lab, rng.randrange(k)))
            edges.add((y, lab, rng.randrange(k)))
        edges.add((y, "h", rng.randrange(k)))
        edges.add((x, "h", rng.randrange(k)))
        if rng.random() < 0.5 and i > 0:
            edges.add((x, "tau", x - 2))
    return nxt, sorted(edges)


def write_aut(path, n, edges):
    with open(path, "w") as f:
        f.write("des (0,%d,%d)\n" % (len(edges), n))
        for x, lab, y in edges:
            f.write('(%d,"%s",%d)\n' % (x, lab, y))


def run(weft, path, eq, alg, threads, out):
    r = subprocess.run(
        [weft, "reduce", path, "--equivalence", eq, "--branching-algorithm", alg,
         "--threads", str(threads), "-o", out],
        capture_output=True, text=True)
    if r.returncode != 0:
        return "exit %d: %s" % (r.returncode, r.stderr.strip())
    with open(out) as f:
        return f.read()


def main():
    args = sys.argv[1:]
    old, new = args[0], args[1]
    count, seed, max_states = 200, 1, 60
    i = 2
    while i < len(args):
        if args[i] == "--count":
            count = int(args[i + 1])
        elif args[i] == "--seed":
            seed = int(args[i + 1])
        elif args[i] == "--max-states":
            max_states = int(args[i + 1])
        i += 2
    rng = random.Random(seed)
    shapes = [uniform, tau_tree, lacking]
    tmp = tempfile.mkdtemp()
    path, out = os.path.join(tmp, "in.aut"), os.path.join(tmp, "out.aut")
    compared = 0
    for case in range(count):
        shape = shapes[case % len(shapes)]
        n, edges = shape(rng, rng.randint(2, max_states))
        write_aut(path, n, edges)
        for eq in ["branching", "divergence-preserving-branching"]:
            reference = None
            for alg in ["constellations", "auto", "signatures-then-constellations"]:
                for threads in [1, 2]:
                    a = run(old, path, eq, alg, threads, out)
                    b = run(new, path, eq, alg, threads, out)
                    compared += 1
                    if reference is None:
                        reference = b
                    if a != b or b != reference:
                        write_aut("/tmp/reduce-diff-fail.aut", n, edges)
                        print("DIFFERENCE case %d shape %s %s %s threads %d (input in "
                              "/tmp/reduce-diff-fail.aut)" % (case, shape.__name__, eq, alg,
                                                              threads))
                        sys.exit(1)
    print("%d LTSs, %d old/new comparisons, all byte-identical" % (count, compared))


if __name__ == "__main__":
    main()
