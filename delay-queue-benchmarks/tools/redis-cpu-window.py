#!/usr/bin/env python3
"""What a Redis server spent over a window of a running load: its CPU (all its threads, INFO cpu), the time its
main thread waited for a core and that thread's context switches (/proc/<pid>/schedstat and status, which speak
for the main thread), and each command's calls and time per second (INFO commandstats: a script's time holds the
commands it calls, which are also counted under their own names).

    python3 redis-cpu-window.py PORT DELAY_SECONDS WINDOW_SECONDS

Reads /proc of the server's process, so run it on the server's machine. Standard library only.
"""
import re
import socket
import sys
import time


def main():
    port, delay, window = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    redis = socket.create_connection(('127.0.0.1', port))
    reader = redis.makefile('rb')

    def info(section):
        redis.sendall(('INFO %s\r\n' % section).encode())
        length = int(reader.readline()[1:])
        text = reader.read(length + 2).decode()
        return dict(line.split(':', 1) for line in text.split('\r\n') if ':' in line)

    pid = info('server')['process_id']

    def snapshot():
        cpu = info('cpu')
        commands = {}
        for name, value in info('commandstats').items():
            fields = dict(field.split('=') for field in value.split(','))
            commands[name[len('cmdstat_'):]] = (int(fields['calls']), int(fields['usec']))
        waited_ns = int(open('/proc/%s/schedstat' % pid).read().split()[1])
        status = open('/proc/%s/status' % pid).read()
        switches = [int(re.search(r'^%s:\s+(\d+)' % name, status, re.M).group(1))
                    for name in ('voluntary_ctxt_switches', 'nonvoluntary_ctxt_switches')]
        return (float(cpu['used_cpu_sys']) + float(cpu['used_cpu_user']), waited_ns, switches, commands,
                time.monotonic())

    time.sleep(delay)
    before = snapshot()
    time.sleep(window)
    after = snapshot()
    seconds = after[4] - before[4]
    print('window %.1f s: Redis CPU %.1f ms/s; its main thread waited for a core %.1f ms/s, context switches/s: '
          'voluntary %.0f, involuntary %.0f' % (seconds, (after[0] - before[0]) * 1e3 / seconds,
                                (after[1] - before[1]) / 1e6 / seconds,
                                (after[2][0] - before[2][0]) / seconds, (after[2][1] - before[2][1]) / seconds))
    rows = []
    for name, (calls, usec) in after[3].items():
        calls_before, usec_before = before[3].get(name, (0, 0))
        if calls > calls_before:
            rows.append((usec - usec_before, calls - calls_before, name))
    for usec, calls, name in sorted(rows, reverse=True):
        print('  %-16s calls/s %8.1f  usec/s %9.1f' % (name, calls / seconds, usec / seconds))


if __name__ == '__main__':
    main()
