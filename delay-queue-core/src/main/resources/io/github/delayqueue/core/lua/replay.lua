-- replay: sends a dead job back to ready with a fresh set of attempts (its last error is kept).
--
-- KEYS[1] jobs   KEYS[2] payloads   KEYS[3] ready   KEYS[4] dead   KEYS[5] signal
-- ARGV[1] id
--
-- Returns 1 replayed, 0 no such job, -2 the job is not dead, -3 it has no payload to run.

local jobs, payloads, ready, dead, signal = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id = ARGV[1]
local raw = redis.call('HGET', jobs, id)
local m = meta_decode(raw)
if not m then
  if not raw and redis.call('HEXISTS', payloads, id) == 1 then
    return -2 -- waiting for its first claim
  end
  return 0
end
if m.state ~= 'X' then
  return -2
end
if redis.call('HEXISTS', payloads, id) == 0 then
  return -3
end
local now = now_ms()
m.state = 'R'
m.attempts = 0
m.due = now
redis.call('ZREM', dead, id)
redis.call('ZADD', ready, now, id)
redis.call('HSET', jobs, id, meta_encode(m))
signal_ready(signal)
return 1
