#!/usr/bin/env python3
"""slices.py DIR - summarise the slices.<rank> files that bench/probe/slices.c wrote.

A slice is the time a rank runs between returning from sched_yield and calling it
again; it is fruitless when no MPI_Waitall finished in it. Per CPU (the one each slice
started on), over the middle 80% of the run: the ranks seen there, slices per
iteration (MPI_Waitall calls of the ranks that ran there, divided by their number),
the fraction of fruitless slices, the mean time inside fruitless and fruitful slices,
and the median gap between one slice's sched_yield call and the next slice's start on
that CPU (the kernel's switch)."""

import collections
import glob
import os
import statistics
import sys


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "/tmp"
    events = []
    for path in glob.glob(os.path.join(folder, "slices.*")):
        rank = int(path.rsplit(".", 1)[1])
        with open(path) as f:
            for line in f:
                t, e = line.split()
                events.append((int(t), rank, e))
    if not events:
        sys.exit("no slices.* files in %s" % folder)
    events.sort()
    open_slice = {}
    slices = collections.defaultdict(list)  # cpu -> (start, rank, waitalls, end)
    for t, rank, e in events:
        if e.isdigit():
            open_slice[rank] = [int(e), t, 0]
        elif e == "W" and rank in open_slice:
            open_slice[rank][2] += 1
        elif e == "Y" and rank in open_slice:
            cpu, start, done = open_slice.pop(rank)
            slices[cpu].append((start, rank, done, t))
    for cpu in sorted(slices):
        s = sorted(slices[cpu])
        s = s[len(s) // 10: len(s) * 9 // 10]
        if len(s) < 2:
            continue
        ranks = sorted({x[1] for x in s})
        iters = sum(x[2] for x in s) / len(ranks)
        fruitless = [x[3] - x[0] for x in s if x[2] == 0]
        fruitful = [x[3] - x[0] for x in s if x[2] > 0]
        gaps = [s[i + 1][0] - s[i][3] for i in range(len(s) - 1)]
        print("cpu %d: ranks %s  slices/iteration %.2f  fruitless %.2f  in-slice us: fruitless %.2f fruitful %.2f  switch gap us %.2f"
              % (cpu, ranks, len(s) / max(iters, 1),
                 len(fruitless) / len(s),
                 statistics.mean(fruitless) / 1e3 if fruitless else 0.0,
                 statistics.mean(fruitful) / 1e3 if fruitful else 0.0,
                 statistics.median(gaps) / 1e3))


if __name__ == "__main__":
    main()
