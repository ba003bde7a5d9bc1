#!/usr/bin/env python3
"""Measures whether this machine's cores keep their speed: one process pinned to each core runs the same small
piece of arithmetic over and over for SECONDS, timing each piece, and the pieces are then summed in windows of
100 ms. A window whose pieces took on average more than the median piece ran slower than the core's usual speed:
on an otherwise idle machine that is the host taking the core away (a virtual machine's CPU quota, a neighbour on
the same physical core), whatever runs on it.

    python3 cpu-steadiness.py SECONDS

Run it on an idle machine (it keeps every core busy). Standard library only; Linux (it pins with
os.sched_setaffinity).
"""
import multiprocessing
import os
import sys
import time

WINDOW_SECONDS = 0.1
PIECE_ITERATIONS = 20000


def spin(cpu, start_at, seconds, queue):
    os.sched_setaffinity(0, {cpu})
    while time.monotonic() < start_at:
        pass
    pieces = []
    x = 0
    end = start_at + seconds
    while True:
        begin = time.monotonic()
        if begin >= end:
            break
        for i in range(PIECE_ITERATIONS):
            x += i * i
        pieces.append((begin - start_at, time.monotonic() - begin))
    queue.put((cpu, pieces))


def windows(pieces):
    durations = sorted(d for _, d in pieces)
    median = durations[len(durations) // 2]
    by_window = {}
    for at, duration in pieces:
        by_window.setdefault(int(at / WINDOW_SECONDS), []).append(duration)
    return median, {w: sum(d) / len(d) / median for w, d in by_window.items()}


def main():
    seconds = float(sys.argv[1])
    cpus = sorted(os.sched_getaffinity(0))
    queue = multiprocessing.Queue()
    start_at = time.monotonic() + 0.5
    workers = [multiprocessing.Process(target=spin, args=(cpu, start_at, seconds, queue)) for cpu in cpus]
    for worker in workers:
        worker.start()
    results = dict(queue.get() for _ in workers)
    for worker in workers:
        worker.join()
    slowdowns = {}
    for cpu in cpus:
        median, by_window = windows(results[cpu])
        slowdowns[cpu] = by_window
        factors = sorted(by_window.values())
        print('cpu %d: %d pieces, median %.3f ms; windows of %d ms: %d, slower than 1.5x: %d, than 3x: %d, '
              'slowest %.1fx' % (cpu, len(results[cpu]), median * 1000, WINDOW_SECONDS * 1000, len(factors),
                                 sum(f > 1.5 for f in factors), sum(f > 3 for f in factors), factors[-1]))
    shared = sorted(set.intersection(*(set(w) for w in slowdowns.values())))
    both = [w for w in shared if all(slowdowns[cpu][w] > 2 for cpu in cpus)]
    print('windows slower than 2x on every core at once: %d, at (s) %s' % (
        len(both), ', '.join('%.1f (%s)' % (w * WINDOW_SECONDS, '/'.join('%.1fx' % slowdowns[cpu][w] for cpu in cpus))
                             for w in both)))


if __name__ == '__main__':
    main()
