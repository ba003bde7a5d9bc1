-- replay: sends dead jobs back to ready with a fresh set of attempts (their last error is kept).
--
-- KEYS[1] jobs   KEYS[2] payloads   KEYS[3] ready   KEYS[4] dead   KEYS[5] signal
-- ARGV[1..] ids
--
-- Returns, per id in order, 1 replayed, 0 no such job, -2 the job is not dead, -3 it has no payload to run.

local jobs, payloads, ready, dead, signal = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local now = now_ms()
local codes = {}
local replayed = false
for i = 1, #ARGV do
  local id = ARGV[i]
  local raw = redis.call('HGET', jobs, id)
  local m = meta_decode(raw)
  local code
  if not m then
    code = 0
    if not raw and redis.call('HEXISTS', payloads, id) == 1 then
      code = -2 -- waiting for its first claim
    end
  elseif m.state ~= 'X' then
    code = -2
  elseif redis.call('HEXISTS', payloads, id) == 0 then
    code = -3
  else
    m.state = 'R'
    m.attempts = 0
    m.due = now
    redis.call('ZREM', dead, id)
    redis.call('ZADD', ready, now, id)
    redis.call('HSET', jobs, id, meta_encode(m))
    replayed = true
    code = 1
  end
  codes[i] = code
end
if replayed then
  signal_ready(signal)
end
return codes
