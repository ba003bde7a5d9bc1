-- promote: moves jobs that have fallen due from delayed to ready, at most ARGV[1] per call. The batch
-- is read, removed and written with one command each, so a batch costs a handful of commands, not a
-- few per job.
--
-- KEYS[1] jobs   KEYS[2] delayed   KEYS[3] ready   KEYS[4] dead   KEYS[5] signal
-- ARGV[1] batch size
--
-- Returns { moved, next due ms or -1, now us, more (1 when the batch was full), corrupt... }
-- where corrupt lists the ids met with unreadable meta (moved to dead) or another state (index entry dropped).

local jobs, delayed, ready, dead, signal = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local batch = tonumber(ARGV[1])
local now = now_ms()

local due = redis.call('ZRANGEBYSCORE', delayed, '-inf', int(now), 'WITHSCORES', 'LIMIT', '0', int(batch))
local due_ids = {}
for i = 1, #due, 2 do
  due_ids[#due_ids + 1] = due[i]
end
local moved = 0
local corrupt = {}
if #due_ids > 0 then
  -- the due ids are exactly the lowest ranks of the set
  redis.call('ZREMRANGEBYRANK', delayed, '0', int(#due_ids - 1))
  local metas = redis.call('HMGET', jobs, unpack(due_ids))
  local new_metas, ready_entries = {}, {}
  for i, id in ipairs(due_ids) do
    local raw = metas[i]
    local m = meta_decode(raw)
    if not raw then
      -- waiting for its first claim: its state is the index holding it (claim checks its pool entry)
      ready_entries[#ready_entries + 1] = due[2 * i]
      ready_entries[#ready_entries + 1] = id
      moved = moved + 1
    elseif m and m.state == 'D' then
      m.state = 'R'
      new_metas[#new_metas + 1] = id
      new_metas[#new_metas + 1] = meta_encode(m)
      ready_entries[#ready_entries + 1] = int(m.due)
      ready_entries[#ready_entries + 1] = id
      moved = moved + 1
    elseif m then
      corrupt[#corrupt + 1] = id -- a stale index entry: the job lives on in the state its meta names
    else
      bury_corrupt(jobs, dead, id, corrupt_reason('in delayed', raw), now)
      corrupt[#corrupt + 1] = id
    end
  end
  if #new_metas > 0 then
    redis.call('HSET', jobs, unpack(new_metas))
  end
  if moved > 0 then
    redis.call('ZADD', ready, unpack(ready_entries))
    signal_ready(signal)
  end
end

return batch_reply(moved, delayed, #due_ids == batch, corrupt)
