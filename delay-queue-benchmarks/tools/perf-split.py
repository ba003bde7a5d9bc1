#!/usr/bin/env python3
"""Splits a Redis server's CPU samples between the commands and the rest, from a profile with call stacks:

    perf record -F 1000 -e cpu-clock --call-graph dwarf,16384 -p REDIS_PID -o redis.data -- sleep 20
    perf script -i redis.data -F ip,sym,dso > redis-stacks.txt
    python3 perf-split.py redis-stacks.txt

A sample is in a command when Redis's call() is on its stack (the packaged server keeps that symbol, and
evalGenericCommand's, for its crash reports); the kernel's samples are split by whether the kernel was switching
tasks, and named by the system call the server was in (epoll_wait: going to sleep; writev: a reply; read: a
request). Standard library only.
"""
import collections
import sys


def main():
    samples = [block for block in open(sys.argv[1]).read().split('\n\n') if block.strip()]
    parts, calls = collections.Counter(), collections.Counter()
    for block in samples:
        frames = [line.strip().split(None, 1)[-1] for line in block.strip().split('\n') if line.strip()]
        in_command = any(frame.startswith('call (') for frame in frames)
        where = 'in a command' if in_command else 'outside commands'
        if 'kernel.kallsyms' in frames[0]:
            switching = any(frame.startswith(('__schedule', 'finish_task_switch')) for frame in frames
                            if 'kernel.kallsyms' in frame)
            kind = 'kernel, switching tasks' if switching else 'kernel, the rest'
            user = [frame.split(' ')[0] for frame in frames if 'kernel.kallsyms' not in frame]
            calls[(where, kind, user[0] if user else '?')] += 1
        else:
            kind = 'the server\'s own code (Lua, Redis, libc, jemalloc)'
        parts[(where, kind)] += 1
    print('%d samples' % len(samples))
    for (where, kind), count in parts.most_common():
        print('%5.1f %%  %s, %s' % (100.0 * count / len(samples), where, kind))
    print('the kernel\'s samples by the system call the server was in:')
    for (where, kind, call), count in calls.most_common():
        print('%5.1f %%  %s, %s, %s' % (100.0 * count / len(samples), where, kind, call))


if __name__ == '__main__':
    main()
