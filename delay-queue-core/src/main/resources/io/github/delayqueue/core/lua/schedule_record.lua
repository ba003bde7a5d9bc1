-- Shared by the scripts that touch recurring schedules (prepended after common.lua by DelayQueueScripts).
--
-- A schedule lives in its bucket (the bucket of its id) as three fields of the bucket's `schedules` hash:
--   `line:<id>`  := state|pending|last|times, the short line scripts rewrite:
--      state    A active, P paused (then nothing is pending)
--      pending  the id of its pending occurrence (a job never claimed yet: delayed or ready), '' when none
--      last     the fire time (epoch ms) of the latest occurrence enqueued, '' when none yet; on a paused line,
--               the time its resume goes on after (the Java side's; see Schedules.pause)
--      times    the fire times to come after the pending one, computed by the Java side, as items joined by
--               ',': an item is a fire time in epoch ms, with '-n' appended when the topic has several buckets
--               (the smallest n that puts the occurrence id in this bucket). The occurrence of item x is the
--               job `<id>@x`.
--   `def:<id>`   := the definition the Java side wrote (recurrence, misfire policy, job policy); opaque here
--   `entry:<id>` := the pool entry (policy number:|payload) a new pending occurrence is written with

local function schedule_line_decode(line)
  return string.match(line, '^([AP])|([^|]*)|([^|]*)|(.*)$')
end

local function schedule_line(state, pending, last, times)
  return table.concat({ state, pending, last, times }, '|')
end

-- The id of the schedule whose occurrence job `id` would be, or nil for an id not shaped as one. A claim asks
-- this of every job it takes: a plain search for the '@' costs a fifth of the pattern, which backtracks over
-- the whole id.
local function schedule_of(id)
  if not string.find(id, '@', 1, true) then
    return nil
  end
  return string.match(id, '^(.+)@%d+%-?%d*$')
end

local function item_fire(item)
  return tonumber(string.match(item, '^(%d+)'))
end

-- Writes an occurrence into the bucket, delayed until its fire time, with pool entry `entry` (and meta
-- `meta` when the entry has no policy number); wakes the pollers when it is the bucket's new earliest job.
local function enqueue_occurrence(payloads, jobs, delayed, id, fire, entry, meta, channel, bucket)
  local head = earliest(delayed)
  redis.call('HSET', payloads, id, entry)
  if meta then
    redis.call('HSET', jobs, id, meta)
  end
  redis.call('ZADD', delayed, fire, id)
  if head < 0 or fire < head then
    wake_pollers(channel, bucket)
  end
end

-- Removes a pending occurrence (never claimed: delayed or ready) leaving nothing behind; one whose meta says
-- it was claimed after all is left alone.
local function drop_occurrence(payloads, jobs, delayed, ready, id)
  local raw = redis.call('HGET', jobs, id)
  if raw and not string.match(raw, '^[DR]|') then
    return
  end
  redis.call('ZREM', delayed, id)
  redis.call('ZREM', ready, id)
  redis.call('HDEL', payloads, id)
  redis.call('HDEL', jobs, id)
end
