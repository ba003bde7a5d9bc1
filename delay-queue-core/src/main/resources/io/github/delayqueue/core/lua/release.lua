-- release: hands a held job straight back to ready without counting the attempt, for a consumer that
-- is shutting down before its handler finished (so the job need not wait for its TTR).
--
-- KEYS[1] jobs   KEYS[2] ready   KEYS[3] reserved   KEYS[4] signal
-- ARGV[1] id   ARGV[2] lease token
--
-- Returns 1 released, 0 no such job, -1 stale lease.

local jobs, ready, reserved, signal = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id = ARGV[1]
local m, refused = held_meta(jobs, id, ARGV[2])
if not m then
  return refused
end
m.state = 'R'
m.token = ''
if m.attempts > 0 then
  m.attempts = m.attempts - 1
end
redis.call('ZREM', reserved, id)
redis.call('ZADD', ready, m.due, id)
redis.call('HSET', jobs, id, meta_encode(m))
signal_ready(signal)
return 1
