-- make_due: makes delayed jobs due now, ahead of their time: one job by id, or, at most ARGV[4] per call, every
-- job due by a horizon. Each moves from delayed to ready as promote moves it, with its due time brought forward
-- to now (a job already overdue keeps its due time), and consumers are signalled.
--
-- KEYS[1] jobs   KEYS[2] delayed   KEYS[3] ready   KEYS[4] dead   KEYS[5] signal
-- ARGV[1] id of the one job to make due, or '' for every job due by the horizon
-- ARGV[2] horizon as ms from the Redis clock's now, or ''   ARGV[3] horizon as epoch ms, or ''
-- ARGV[4] batch size
--
-- With an id, returns { 1 } made due, { 0 } no such job, or { -2, state } not delayed (its state, '?' when its
-- meta cannot be read).
-- Without, returns { moved, next due ms or -1, now us, more (1 when the batch was full), corrupt... }, where
-- corrupt lists the ids met with unreadable meta (moved to dead) or another state (index entry dropped).

local jobs, delayed, ready, dead, signal = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id = ARGV[1]
local now = now_ms()

local new_metas, ready_entries, corrupt = {}, {}, {}

-- Queues the move of one job found in delayed with score `score`; returns whether it moves.
local function make_ready(job_id, raw, score)
  local due = math.min(score, now)
  local m = meta_decode(raw)
  if not raw then
    -- waiting for its first claim: its state is the index holding it, its due time its score
    ready_entries[#ready_entries + 1] = due
    ready_entries[#ready_entries + 1] = job_id
    return true
  elseif m and m.state == 'D' then
    m.state = 'R'
    m.due = due
    new_metas[#new_metas + 1] = job_id
    new_metas[#new_metas + 1] = meta_encode(m)
    ready_entries[#ready_entries + 1] = due
    ready_entries[#ready_entries + 1] = job_id
    return true
  elseif m then
    corrupt[#corrupt + 1] = job_id -- a stale index entry: the job lives on in the state its meta names
  else
    bury_corrupt(jobs, dead, job_id, corrupt_reason('in delayed', raw), now)
    corrupt[#corrupt + 1] = job_id
  end
  return false
end

local function write_moves()
  if #new_metas > 0 then
    redis.call('HSET', jobs, unpack(new_metas))
  end
  if #ready_entries > 0 then
    redis.call('ZADD', ready, unpack(ready_entries))
    signal_ready(signal)
  end
end

if id ~= '' then
  local raw = redis.call('HGET', jobs, id)
  local m = meta_decode(raw)
  local score = redis.call('ZSCORE', delayed, id)
  if not score or (m and m.state ~= 'D') then
    local state
    if m then
      state = m.state
    elseif raw then
      state = '?'
    else
      state = pending_state(delayed, ready, id) -- no meta: the index holding it, if any
    end
    if not state then
      return { 0 }
    end
    return { -2, state }
  end
  redis.call('ZREM', delayed, id)
  local moved = make_ready(id, raw, tonumber(score))
  write_moves()
  if moved then
    return { 1 }
  end
  return { -2, '?' }
end

local batch = tonumber(ARGV[4])
local horizon
if ARGV[3] ~= '' then
  horizon = tonumber(ARGV[3])
else
  horizon = now + tonumber(ARGV[2])
end
local due = redis.call('ZRANGEBYSCORE', delayed, '-inf', horizon, 'WITHSCORES', 'LIMIT', 0, batch)
local due_ids = {}
for i = 1, #due, 2 do
  due_ids[#due_ids + 1] = due[i]
end
local moved = 0
if #due_ids > 0 then
  -- the ids due by the horizon are exactly the lowest ranks of the set
  redis.call('ZREMRANGEBYRANK', delayed, 0, #due_ids - 1)
  local metas = redis.call('HMGET', jobs, unpack(due_ids))
  for i, due_id in ipairs(due_ids) do
    if make_ready(due_id, metas[i], tonumber(due[2 * i])) then
      moved = moved + 1
    end
  end
  write_moves()
end

return batch_reply(moved, delayed, #due_ids == batch, corrupt)
