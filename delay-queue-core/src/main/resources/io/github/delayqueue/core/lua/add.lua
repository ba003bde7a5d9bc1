-- add: puts a new job into its bucket, delayed or (when already due) ready.
--
-- KEYS[1] jobs      hash  id -> meta
-- KEYS[2] payloads  hash  id -> payload
-- KEYS[3] delayed   zset  id by due time
-- KEYS[4] ready     zset  id by due time
-- KEYS[5] reserved  zset  id by lease deadline
-- KEYS[6] dead      zset  id by time of death
-- KEYS[7] signal    zset  consumer wake-up marker
-- ARGV[1] id
-- ARGV[2] payload
-- ARGV[3] delay in ms from the Redis clock's now, or '' when ARGV[4] is given
-- ARGV[4] due time in epoch ms, taken as given, or ''
-- ARGV[5] ttr ms          ARGV[6] max attempts
-- ARGV[7] back-off initial ms   ARGV[8] multiplier   ARGV[9] max ms   ARGV[10] jitter
-- ARGV[11] if the id exists: 'REJECT' or 'REPLACE'
-- ARGV[12] poller wake-up channel   ARGV[13] this bucket's index
--
-- Returns { code, due ms, now ms }: code 1 added, 2 replaced an existing job, 0 rejected (id exists).

local jobs, payloads, delayed, ready, reserved, dead, signal = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local id = ARGV[1]
local now = now_ms()

local due
if ARGV[4] ~= '' then
  due = tonumber(ARGV[4])
else
  due = now + tonumber(ARGV[3])
end
local m = { state = 'D', attempts = 0, max = tonumber(ARGV[6]), ttr = tonumber(ARGV[5]), due = due, token = '',
            bi = tonumber(ARGV[7]), bm = tonumber(ARGV[8]), bx = tonumber(ARGV[9]), bj = tonumber(ARGV[10]), err = '' }
if due <= now then
  m.state = 'R'
end

local code = 1
if ARGV[11] == 'REPLACE' then
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
  return { 0, -1, now }
end
redis.call('HSET', payloads, id, ARGV[2])

if m.state == 'R' then
  redis.call('ZADD', ready, due, id)
  signal_ready(signal)
else
  local head = earliest(delayed)
  redis.call('ZADD', delayed, due, id)
  if head < 0 or due < head then
    wake_pollers(ARGV[12], ARGV[13])
  end
end
return { code, due, now }
