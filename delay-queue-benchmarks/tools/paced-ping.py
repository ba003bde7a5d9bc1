#!/usr/bin/env python3
"""Sends PING to a Redis server at a steady rate from one connection, each after the reply before it, so that a
window of redis-cpu-window.py shows what taking a call and answering it costs an otherwise idle server.

    python3 paced-ping.py PORT CALLS_PER_SECOND SECONDS

Standard library only.
"""
import socket
import sys
import time


def main():
    port, rate, seconds = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    redis = socket.create_connection(('127.0.0.1', port))
    redis.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    start = time.monotonic()
    deadline, calls = start, 0
    while time.monotonic() - start < seconds:
        deadline += 1.0 / rate
        pause = deadline - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        redis.sendall(b'PING\r\n')
        if redis.recv(64) != b'+PONG\r\n':
            raise SystemExit('unexpected reply')
        calls += 1
    print('%d PINGs in %.1f s, %.0f a second' % (calls, time.monotonic() - start,
                                                 calls / (time.monotonic() - start)))


if __name__ == '__main__':
    main()
