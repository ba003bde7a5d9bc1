#!/usr/bin/env python3
"""What a pending job would cost Redis if a bucket's delayed set were kept as many small sorted sets ("slices")
instead of one, the whole layout measured, not only the entries: the slices' index, the splits as slices fill, the
due time a cancel needs to find its job's slice, and what an add, a claim and a cancel then cost.

    python3 sliced-delayed-set.py [JOBS [PAYLOAD_BYTES]]        (defaults: 1000000 200)

Two layouts, each written by a Lua script per operation, one job per call, as the engine sends single adds:

  one set   (today's): pool hash  id -> entry;  delayed zset  id by due time.
  sliced:   pool hash  id -> due '|' entry (a cancel reads the due time to find the slice);
            index zset  slice number by the lowest due time it holds (slice i holds [bound i, bound i+1));
            slice zsets  <index>:<n>, split in two when one passes 128 entries (zset-max-listpack-entries), so
            Redis keeps each as a listpack; emptied slices leave the index.

Both reduced to what the delayed set changes: no policies, metas, signals or wake-ups (the engine's add.lua and
claim.lua carry those whatever the layout). Each layout gets JOBS jobs (26-character ids, a 200-byte payload) due
uniformly over one hour, added in random order (the pool entry as the engine writes it for a job
with no add token or headers: policy number '|' payload), then: cancels of a tenth of the jobs, at random; claims (poller-like:
up to 1 job, then up to 32) through a simulated clock (passed in, so every job claimed is due), a tenth of the jobs
each; the memory a pending job costs after the adds and after the rest. A second pattern adds jobs in due order
(a fixed delay at a steady rate: every add lands at the end), the case that fills slices only halfway.

Measured: used_memory per job beyond the payload (the pool entry's value less the 200 payload bytes counts as
overhead, as the benchmark's memory row counts it); INFO commandstats: microseconds per script call (usec_per_call of EVALSHA) and the commands each call
ran. It starts a redis-server of its own (from the PATH) on a free port in a temporary directory and stops it by
its PID. Standard library only.
"""
import os
import random
import socket
import subprocess
import sys
import tempfile
import time

SLICE_MAX = 128

ONE_SET_ADD = """
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[3]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return 1
"""

ONE_SET_CANCEL = """
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
return redis.call('ZREM', KEYS[2], ARGV[1])
"""

ONE_SET_CLAIM = """
local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', '0', ARGV[2])
if #due == 0 then return 0 end
redis.call('ZREMRANGEBYRANK', KEYS[2], '0', tostring(#due - 1))
redis.call('HDEL', KEYS[1], unpack(due))
return #due
"""

# The slice holding due time `due`: the one of the highest bound at or below it, else the first (whose bound a
# due time below every bound then lowers); nil when there is no slice.
SLICE_OF = """
local function slice_of(index, due)
  local found = redis.call('ZREVRANGEBYSCORE', index, due, '-inf', 'LIMIT', '0', '1')
  if found[1] then return found[1], false end
  found = redis.call('ZRANGE', index, '0', '0')
  return found[1], true
end
"""

SLICED_ADD = SLICE_OF + """
local pool, index, id, due = KEYS[1], KEYS[2], ARGV[1], ARGV[2]
if redis.call('HSETNX', pool, id, due .. '|' .. ARGV[3]) == 0 then return 0 end
local slice, below = slice_of(index, due)
if not slice then
  slice = tostring(redis.call('INCR', index .. ':seq'))
  below = true
end
if below then
  redis.call('ZADD', index, due, slice)
end
local key = index .. ':' .. slice
redis.call('ZADD', key, due, id)
if redis.call('ZCARD', key) > SLICE_MAX then
  -- split at the rank nearest the middle whose due time differs from the rank before (ties stay together)
  local all = redis.call('ZRANGE', key, '0', '-1', 'WITHSCORES')
  local n = #all / 2
  local at
  for offset = 0, n do
    for _, rank in ipairs({ math.floor(n / 2) + offset, math.floor(n / 2) - offset }) do
      if rank >= 1 and rank < n and all[2 * rank + 2] ~= all[2 * rank] then
        at = rank
        break
      end
    end
    if at then break end
  end
  if at then
    -- both halves written anew: a sorted set Redis has turned into a skiplist stays one as it shrinks
    local kept, moved = {}, {}
    for rank = 0, n - 1 do
      local half = (rank < at) and kept or moved
      half[#half + 1] = all[2 * rank + 2]
      half[#half + 1] = all[2 * rank + 1]
    end
    local new_slice = tostring(redis.call('INCR', index .. ':seq'))
    redis.call('DEL', key)
    redis.call('ZADD', key, unpack(kept))
    redis.call('ZADD', index .. ':' .. new_slice, unpack(moved))
    redis.call('ZADD', index, moved[1], new_slice)
  end
end
return 1
"""

SLICED_CANCEL = SLICE_OF + """
local pool, index, id = KEYS[1], KEYS[2], ARGV[1]
local entry = redis.call('HGET', pool, id)
if not entry then return 0 end
redis.call('HDEL', pool, id)
local slice = slice_of(index, string.match(entry, '^(%d+)|'))
local key = index .. ':' .. slice
redis.call('ZREM', key, id)
if redis.call('EXISTS', key) == 0 then
  redis.call('ZREM', index, slice)
end
return 1
"""

SLICED_CLAIM = """
local pool, index, now, want = KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2])
local claimed = {}
while #claimed < want do
  local first = redis.call('ZRANGE', index, '0', '0')[1]
  if not first then break end
  local key = index .. ':' .. first
  local due = redis.call('ZRANGEBYSCORE', key, '-inf', now, 'LIMIT', '0', tostring(want - #claimed))
  if #due == 0 then break end
  redis.call('ZREMRANGEBYRANK', key, '0', tostring(#due - 1))
  for i = 1, #due do claimed[#claimed + 1] = due[i] end
  if redis.call('EXISTS', key) == 1 then break end
  redis.call('ZREM', index, first)
end
if #claimed == 0 then return 0 end
redis.call('HDEL', pool, unpack(claimed))
return #claimed
"""


class Redis:
    """A RESP client that pipelines: send() queues a command, flush() writes them and reads every reply."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.file = self.sock.makefile("rb")
        self.pending = []

    def send(self, *args):
        parts = [b"*%d\r\n" % len(args)]
        for arg in args:
            data = arg if isinstance(arg, bytes) else str(arg).encode()
            parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
        self.pending.append(b"".join(parts))

    def flush(self):
        count = len(self.pending)
        self.sock.sendall(b"".join(self.pending))
        self.pending = []
        return [self.read() for _ in range(count)]

    def call(self, *args):
        self.send(*args)
        return self.flush()[0]

    def read(self):
        line = self.file.readline()
        kind, rest = line[:1], line[1:-2]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            length = int(rest)
            if length < 0:
                return None
            data = self.file.read(length + 2)[:-2]
            return data.decode()
        if kind == b"*":
            length = int(rest)
            return None if length < 0 else [self.read() for _ in range(length)]
        raise RuntimeError(f"unexpected reply {line!r}")

    def info(self, section):
        fields = {}
        for line in self.call("INFO", section).splitlines():
            if ":" in line:
                key, value = line.split(":", 1)
                fields[key] = value.strip()
        return fields


def stats_of(redis):
    """INFO commandstats as {command: (calls, usec)}."""
    stats = {}
    for key, value in redis.info("commandstats").items():
        fields = dict(part.split("=") for part in value.split(","))
        stats[key[len("cmdstat_"):]] = (int(fields["calls"]), int(fields["usec"]))
    return stats


def run_calls(redis, sha, keys, argument_lists, chunk=2000):
    """Sends one EVALSHA per argument list, pipelined; returns (usec per call, commands per call, wall seconds)."""
    redis.call("CONFIG", "RESETSTAT")
    started = time.perf_counter()
    for first in range(0, len(argument_lists), chunk):
        for arguments in argument_lists[first:first + chunk]:
            redis.send("EVALSHA", sha, len(keys), *keys, *arguments)
        redis.flush()
    wall = time.perf_counter() - started
    stats = stats_of(redis)
    calls, usec = stats["evalsha"]
    inner = sum(c for name, (c, _) in stats.items() if name not in ("evalsha", "config", "info"))
    return usec / calls, inner / calls, wall


def memory(redis):
    return int(redis.info("memory")["used_memory"])


def measure(redis, layout, scripts, jobs, ordered, payload):
    rng = random.Random(20261129)  # the same jobs, cancels and claims for both layouts
    redis.call("FLUSHALL")
    shas = {name: redis.call("SCRIPT", "LOAD", source) for name, source in scripts.items()}
    keys = ["pool", "delayed"]
    start = 1_800_000_000_000
    if ordered:  # a fixed delay at a steady rate: due times in the order added
        dues = [start + i * 3_600_000 // jobs for i in range(jobs)]
    else:
        dues = [start + rng.randrange(3_600_000) for _ in range(jobs)]
    ids = ["%026d" % (10 ** 20 + i) for i in range(jobs)]
    rows = []
    before = memory(redis)
    usec, commands, wall = run_calls(redis, shas["add"], keys, [(i, d, "1|" + payload) for i, d in zip(ids, dues)])
    after = memory(redis)
    rows.append(("add", usec, commands, wall, jobs))
    per_job_added = (after - before) / jobs - len(payload)
    slices = redis.call("ZCARD", "delayed") if layout == "sliced" else 1
    cancelled = rng.sample(range(jobs), jobs // 10)
    usec, commands, wall = run_calls(redis, shas["cancel"], keys, [(ids[i],) for i in cancelled])
    rows.append(("cancel", usec, commands, wall, len(cancelled)))
    gone = set(cancelled)
    left_dues = sorted(d for i, d in enumerate(dues) if i not in gone)
    claimed = 0
    for want, count in ((1, jobs // 10), (32, jobs // 10)):
        # the clock stands at the due time of the count-th job still pending: every call finds jobs due
        now = left_dues[claimed + count - 1]
        calls = [(now, want)] * -(-count // want)
        usec, commands, wall = run_calls(redis, shas["claim"], keys, calls)
        rows.append((f"claim up to {want}", usec, commands, wall, len(calls)))
        claimed += count
    pending = redis.call("HLEN", "pool")
    per_job_left = (memory(redis) - before) / pending - len(payload)
    return per_job_added, per_job_left, pending, slices, rows


def main():
    jobs = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    payload = "p" * (int(sys.argv[2]) if len(sys.argv) > 2 else 200)
    directory = tempfile.mkdtemp(prefix="sliced-delayed-set-")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no", "--dir", directory], stdout=subprocess.DEVNULL)
    try:
        redis = None
        for _ in range(100):
            try:
                redis = Redis(port)
                redis.call("PING")
                break
            except OSError:
                time.sleep(0.05)
        version = redis.info("server")["redis_version"]
        layouts = {
            "one set": {"add": ONE_SET_ADD, "cancel": ONE_SET_CANCEL, "claim": ONE_SET_CLAIM},
            "sliced": {"add": SLICED_ADD.replace("SLICE_MAX", str(SLICE_MAX)), "cancel": SLICED_CANCEL,
                       "claim": SLICED_CLAIM},
        }
        print(f"redis {version}, {jobs:,} jobs of a {len(payload)}-byte payload, 26-character ids, one job a call "
              f"(pipelined), slices of at most {SLICE_MAX}")
        for ordered in (False, True):
            pattern = "added in due order (a fixed delay)" if ordered else "due uniformly over 1 h, random order"
            print(f"\n== {pattern}")
            print(f"{'layout':<9} {'B/job added':>11} {'B/job after':>11} {'slices':>7}   "
                  f"{'operation':<16} {'us/call':>8} {'cmds/call':>9} {'calls/s':>9}")
            for layout, scripts in layouts.items():
                added, left, pending, slices, rows = measure(redis, layout, scripts, jobs, ordered, payload)
                for n, (operation, usec, commands, wall, calls) in enumerate(rows):
                    head = (f"{layout:<9} {added:>11.1f} {left:>11.1f} {slices:>7,}" if n == 0
                            else " " * 41)
                    print(f"{head}   {operation:<16} {usec:>8.2f} {commands:>9.2f} {calls / wall:>9,.0f}")
                print(f"{'':<9} ({pending:,} jobs pending after the cancels and claims)")
    finally:
        server.terminate()
        server.wait(timeout=30)
        for name in os.listdir(directory):
            os.remove(os.path.join(directory, name))
        os.rmdir(directory)


if __name__ == "__main__":
    main()
