#!/usr/bin/env python3
"""What the delayed set would cost Redis kept as many small sorted sets instead of one: memory per entry and the
time of a ZADD, for the same entries (26-character ids, as the queue generates, scored by due times spread
uniformly over an hour), written once into one sorted set, as a bucket's delayed set holds them today, and once
into sorted sets of WIDTH ms of due time each, which Redis keeps as listpacks while they hold at most
zset-max-listpack-entries (128) entries.

    python3 delayed-set-layouts.py [ENTRIES] [WIDTH_MS ...]      (defaults: 1000000 100 400 3000)

It starts a redis-server of its own (from the PATH) on a free port in a temporary directory, writes the entries
from Lua (100,000 per EVAL, so the client's time does not count), reads used_memory before and after, and
INFO commandstats' usec_per_call of ZADD; then stops that server by its PID. Neither layout's reads (the earliest
due job, a claim's range) are measured here, nor the index of slices a sliced layout would need.
Standard library only.
"""
import os
import socket
import subprocess
import sys
import tempfile
import time

FILL = """
local base, width, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
for i = 1, n do
  local id = string.format('%026d', base + i)
  local due = 1800000000000 + math.random(0, 3600000)
  if width == 0 then
    redis.call('ZADD', KEYS[1], due, id)
  else
    redis.call('ZADD', KEYS[1] .. ':' .. math.floor(due / width), due, id)
  end
end
return n
"""

BATCH = 100_000


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cli(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port), *args], check=True, capture_output=True,
                          text=True).stdout


def info(port, section):
    fields = {}
    for line in cli(port, "INFO", section).splitlines():
        if ":" in line:
            key, value = line.split(":", 1)
            fields[key] = value.strip()
    return fields


def measure(port, entries, width):
    cli(port, "FLUSHALL")
    cli(port, "CONFIG", "RESETSTAT")
    before = int(info(port, "memory")["used_memory"])
    for base in range(0, entries, BATCH):
        cli(port, "EVAL", FILL, "1", "delayed", str(base), str(width), str(min(BATCH, entries - base)))
    after = int(info(port, "memory")["used_memory"])
    zadd = info(port, "commandstats")["cmdstat_zadd"]
    usec_per_call = float(dict(part.split("=") for part in zadd.split(","))["usec_per_call"])
    keys = int(cli(port, "DBSIZE").strip())
    sample = "delayed" if width == 0 else cli(port, "RANDOMKEY").strip()
    encoding = cli(port, "OBJECT", "ENCODING", sample).strip()
    return (after - before) / entries, usec_per_call, keys, encoding


def main():
    entries = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    widths = [int(w) for w in sys.argv[2:]] or [100, 400, 3000]
    directory = tempfile.mkdtemp(prefix="delayed-set-layouts-")
    port = free_port()
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no", "--dir", directory], stdout=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                cli(port, "PING")
                break
            except subprocess.CalledProcessError:
                time.sleep(0.05)
        version = info(port, "server")["redis_version"]
        print(f"redis {version}, {entries:,} entries, due times uniform over 1 h, 26-character ids")
        print(f"{'layout':<38} {'bytes/entry':>11} {'ZADD us':>8} {'keys':>8}  encoding of a key")
        for width in [0] + widths:
            per_entry, usec, keys, encoding = measure(port, entries, width)
            layout = "one sorted set" if width == 0 else f"a sorted set per {width} ms of due time"
            print(f"{layout:<38} {per_entry:>11.1f} {usec:>8.2f} {keys:>8,}  {encoding}")
    finally:
        server.terminate()
        server.wait(timeout=30)
        for name in os.listdir(directory):
            os.remove(os.path.join(directory, name))
        os.rmdir(directory)


if __name__ == "__main__":
    main()
