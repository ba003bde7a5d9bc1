-- promote: moves jobs that have fallen due from delayed to ready, at most ARGV[1] per call.
--
-- KEYS[1] jobs   KEYS[2] delayed   KEYS[3] ready   KEYS[4] dead   KEYS[5] signal
-- ARGV[1] batch size
--
-- Returns { moved, next due ms or -1, now ms, more (1 when the batch was full), corrupt... }
-- where corrupt lists the ids met with unreadable meta (moved to dead) or another state (index entry dropped).

local jobs, delayed, ready, dead, signal = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local batch = tonumber(ARGV[1])
local now = now_ms()

local due_ids = redis.call('ZRANGEBYSCORE', delayed, '-inf', now, 'LIMIT', 0, batch)
local moved = 0
local corrupt = {}
for _, id in ipairs(due_ids) do
  redis.call('ZREM', delayed, id)
  local raw = redis.call('HGET', jobs, id)
  local m = meta_decode(raw)
  if m and m.state == 'D' then
    m.state = 'R'
    redis.call('HSET', jobs, id, meta_encode(m))
    redis.call('ZADD', ready, m.due, id)
    moved = moved + 1
  elseif m then
    corrupt[#corrupt + 1] = id -- a stale index entry: the job lives on in the state its meta names
  else
    bury_corrupt(jobs, dead, id, corrupt_reason('in delayed', raw), now)
    corrupt[#corrupt + 1] = id
  end
end
if moved > 0 then
  signal_ready(signal)
end

local more = 0
if #due_ids == batch then
  more = 1
end
local result = { moved, earliest(delayed), now, more }
for _, id in ipairs(corrupt) do
  result[#result + 1] = id
end
return result
