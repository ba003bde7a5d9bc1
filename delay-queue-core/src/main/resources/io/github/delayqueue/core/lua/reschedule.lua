-- reschedule: gives a delayed or ready job a new due time (it becomes delayed, or ready if already due).
--
-- KEYS[1] jobs   KEYS[2] delayed   KEYS[3] ready   KEYS[4] signal
-- ARGV[1] id   ARGV[2] delay ms from the Redis clock's now, or ''   ARGV[3] due epoch ms, or ''
-- ARGV[4] poller wake-up channel   ARGV[5] bucket index
--
-- Returns { code, due ms or state }: 1 rescheduled (due ms), 0 no such job, -2 not delayed or ready (its state).

local jobs, delayed, ready, signal = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id = ARGV[1]
local m = meta_decode(redis.call('HGET', jobs, id))
if not m then
  return { 0, '' }
end
if m.state ~= 'D' and m.state ~= 'R' then
  return { -2, m.state }
end
local now = now_ms()
if ARGV[3] ~= '' then
  m.due = tonumber(ARGV[3])
else
  m.due = now + tonumber(ARGV[2])
end
redis.call('ZREM', delayed, id)
redis.call('ZREM', ready, id)
if m.due <= now then
  m.state = 'R'
  redis.call('ZADD', ready, m.due, id)
  signal_ready(signal)
else
  m.state = 'D'
  local head = earliest(delayed)
  redis.call('ZADD', delayed, m.due, id)
  if head < 0 or m.due < head then
    wake_pollers(ARGV[4], ARGV[5])
  end
end
redis.call('HSET', jobs, id, meta_encode(m))
return { 1, m.due }
