-- reschedule: gives a delayed or ready job a new due time (it becomes delayed, or ready if already due).
--
-- KEYS[1] jobs   KEYS[2] delayed   KEYS[3] ready   KEYS[4] signal
-- ARGV[1] id   ARGV[2] delay ms from the Redis clock's now, or ''   ARGV[3] due epoch ms, or ''
-- ARGV[4] poller wake-up channel   ARGV[5] bucket index
--
-- Returns { code, due ms or state }: 1 rescheduled (due ms), 0 no such job, -2 not delayed or ready (its state, '?'
-- when its meta cannot be read).

local jobs, delayed, ready, signal = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id = ARGV[1]
local raw = redis.call('HGET', jobs, id)
local m = meta_decode(raw)
local state
if m then
  state = m.state
elseif raw then
  return { -2, '?' } -- meta that cannot be read: left as it is, for the Java side to name
else
  state = pending_state(delayed, ready, id) -- waiting for its first claim: no meta to rewrite
end
if not state then
  return { 0, '' }
end
if state ~= 'D' and state ~= 'R' then
  return { -2, state }
end
local now = now_ms()
local due
if ARGV[3] ~= '' then
  due = tonumber(ARGV[3])
else
  due = now + tonumber(ARGV[2])
end
redis.call('ZREM', delayed, id)
redis.call('ZREM', ready, id)
if due <= now then
  state = 'R'
  redis.call('ZADD', ready, due, id)
  signal_ready(signal)
else
  state = 'D'
  local head = earliest(delayed)
  redis.call('ZADD', delayed, due, id)
  if head < 0 or due < head then
    wake_pollers(ARGV[4], ARGV[5])
  end
end
if m then
  m.state = state
  m.due = due
  redis.call('HSET', jobs, id, meta_encode(m))
end
return { 1, due }
