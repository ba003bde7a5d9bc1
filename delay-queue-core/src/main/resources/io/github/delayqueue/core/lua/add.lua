-- add: puts new jobs into their bucket, each delayed or (when already due) ready: one job, or a batch
-- that pays for the clock read, the poller wake-up and the consumer signal once.
--
-- KEYS[1] jobs      hash  id -> meta
-- KEYS[2] payloads  hash  id -> payload
-- KEYS[3] delayed   zset  id by due time
-- KEYS[4] ready     zset  id by due time
-- KEYS[5] reserved  zset  id by lease deadline
-- KEYS[6] dead      zset  id by time of death
-- KEYS[7] signal    zset  consumer wake-up marker
-- ARGV[1] poller wake-up channel   ARGV[2] this bucket's index
-- then 11 arguments per job:
--   id, payload, delay in ms from the Redis clock's now (or '' when a due time follows),
--   due time in epoch ms taken as given (or ''), ttr ms, max attempts,
--   back-off initial ms, multiplier, max ms, jitter, and 'REJECT' or 'REPLACE' for an existing id
--
-- Returns { now ms, code, due ms, code, due ms, ... } with one code per job: 1 added, 2 replaced an
-- existing job, 0 rejected (the id exists).

local jobs, payloads, delayed, ready, reserved, dead, signal = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local now = now_ms()
local head = earliest(delayed)
local new_head = head
local any_ready = false
local reply = { now }

for first = 3, #ARGV, 11 do
  local id = ARGV[first]
  local due
  if ARGV[first + 3] ~= '' then
    due = tonumber(ARGV[first + 3])
  else
    due = now + tonumber(ARGV[first + 2])
  end
  local m = { state = 'D', attempts = 0, max = tonumber(ARGV[first + 5]), ttr = tonumber(ARGV[first + 4]), due = due,
              token = '', bi = tonumber(ARGV[first + 6]), bm = tonumber(ARGV[first + 7]), bx = tonumber(ARGV[first + 8]),
              bj = tonumber(ARGV[first + 9]), err = '' }
  if due <= now then
    m.state = 'R'
  end

  local code = 1
  if ARGV[first + 10] == 'REPLACE' then
    local existing = redis.call('HGET', jobs, id)
    if existing then
      local old = meta_decode(existing)
      if old then
        unindex({ D = delayed, R = ready, L = reserved, X = dead }, id, old.state)
      else
        for _, key in ipairs({ delayed, ready, reserved, dead }) do
          redis.call('ZREM', key, id)
        end
      end
      code = 2
    end
    redis.call('HSET', jobs, id, meta_encode(m))
  elseif redis.call('HSETNX', jobs, id, meta_encode(m)) == 0 then
    code = 0
  end

  if code ~= 0 then
    redis.call('HSET', payloads, id, ARGV[first + 1])
    if m.state == 'R' then
      redis.call('ZADD', ready, due, id)
      any_ready = true
    else
      redis.call('ZADD', delayed, due, id)
      if new_head < 0 or due < new_head then
        new_head = due
      end
    end
    reply[#reply + 1] = code
    reply[#reply + 1] = due
  else
    reply[#reply + 1] = 0
    reply[#reply + 1] = -1
  end
end

if any_ready then
  signal_ready(signal)
end
if new_head ~= head then
  wake_pollers(ARGV[1], ARGV[2])
end
return reply
