#!/usr/bin/env python3
"""Measures whether this machine's cores keep their speed: one process pinned to each core runs the same small
piece of arithmetic over and over, back to back, for SECONDS, timing each piece; the pieces are then counted in
windows of 100 ms, a piece that spans windows in each by its share there. A window in which fewer pieces ran than
the median piece would fit in ran slower than the core's usual speed: on an otherwise idle machine that is the host
taking the core away (a virtual machine's CPU quota, a neighbour on the same physical core), whatever runs on it.

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
    begin = time.monotonic()
    while begin < end:
        for i in range(PIECE_ITERATIONS):
            x += i * i
        finish = time.monotonic()
        pieces.append((begin - start_at, finish - begin))
        begin = finish  # back to back: a process descheduled between two pieces is so in one of them
    queue.put((cpu, pieces))


def windows(pieces, seconds):
    """Each window's factor: how many median pieces would fit in it over how many pieces ran in it, a piece that
    spans windows counted in each by the share of it there (so a stall counts in every window it covers)."""
    durations = sorted(d for _, d in pieces)
    median = durations[len(durations) // 2]
    count = int(seconds / WINDOW_SECONDS)
    done = [0.0] * count
    for at, duration in pieces:
        w = int(at / WINDOW_SECONDS)
        while w < count and w * WINDOW_SECONDS < at + duration:
            overlap = min(at + duration, (w + 1) * WINDOW_SECONDS) - max(at, w * WINDOW_SECONDS)
            done[w] += overlap / duration if duration > 0 else 1
            w += 1
    fit = WINDOW_SECONDS / median
    return median, {w: (fit / done[w] if done[w] > 0 else fit) for w in range(count)}


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
        median, by_window = windows(results[cpu], seconds)
        slowdowns[cpu] = by_window
        factors = sorted(by_window.values())
        print('cpu %d: %d pieces, median %.3f ms; windows of %d ms: %d, slower than 1.5x: %d, than 3x: %d, '
              'slowest %.1fx' % (cpu, len(results[cpu]), median * 1000, WINDOW_SECONDS * 1000, len(factors),
                                 sum(f > 1.5 for f in factors), sum(f > 3 for f in factors), factors[-1]))
    both = [w for w in range(int(seconds / WINDOW_SECONDS)) if all(slowdowns[cpu][w] > 2 for cpu in cpus)]
    print('windows slower than 2x on every core at once: %d, at (s) %s' % (
        len(both), ', '.join('%.1f (%s)' % (w * WINDOW_SECONDS, '/'.join('%.1fx' % slowdowns[cpu][w] for cpu in cpus))
                             for w in both)))


if __name__ == '__main__':
    main()
