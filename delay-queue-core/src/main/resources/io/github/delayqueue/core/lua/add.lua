-- add: puts new jobs into their bucket, each delayed or (when already due) ready: one job, or a batch
-- that pays for the clock read, the poller wake-up and the consumer signal once.
--
-- KEYS[1] jobs      hash  id -> meta (written here only for a job whose policy gets no number)
-- KEYS[2] payloads  hash  id -> policy number:add token[:headers length]|[headers]payload
-- KEYS[3] delayed   zset  id by due time
-- KEYS[4] ready     zset  id by due time
-- KEYS[5] reserved  zset  id by lease deadline
-- KEYS[6] dead      zset  id by time of death
-- KEYS[7] signal    zset  consumer wake-up marker
-- KEYS[8] policies  hash  the bucket's numbered policies
-- ARGV[1] poller wake-up channel   ARGV[2] this bucket's index
-- then 8 arguments per job:
--   id, payload, delay in ms from the Redis clock's now (or '' when a due time follows),
--   due time in epoch ms taken as given (or ''), its policy line (as `policies` holds it, see common.lua),
--   'REJECT' or 'REPLACE' for an existing id,
--   the add token: random characters (no ':' or '|') the producer sends again when it retries this add,
--   and the job's headers block ('' for none)
--
-- Returns { now ms, code, due ms, code, due ms, ... } with one code per job: 1 added, 2 replaced an
-- existing job, 0 rejected (the id exists). An add whose job already carries its token was delivered
-- before (a client re-sent it after a reconnect, or the producer retried it): it changes nothing and
-- answers as the first delivery did, 1 (or 2 for 'REPLACE'), with a due time of -1.

local jobs, payloads, delayed, ready, reserved, dead, signal, policies =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local now = now_ms()
local head = earliest(delayed)
local new_head = head
local any_ready = false
local known_policies = {}
local reply = { now }

-- Whether `entry` was written by an earlier delivery of the add carrying `token`.
local function written_by(entry, token)
  if not entry or token == '' then
    return false -- an entry from before add tokens has none, and matches no add
  end
  local _, entry_token = entry_head(entry)
  return entry_token == token
end

-- each job's policy number first, before any job is written: a line a job's meta will be read from (its policy
-- gets no number) must be readable, and a script stopped by an error halfway would keep what it wrote
local numbers = {}
for first = 3, #ARGV, 8 do
  local number = policy_number(policies, ARGV[first + 4], known_policies)
  if number == '' and not policy_meta(ARGV[first + 4], 'D', 0) then
    return redis.error_reply('ERR unreadable policy line of job ' .. ARGV[first] .. ': ' .. ARGV[first + 4])
  end
  numbers[first] = number
end

for first = 3, #ARGV, 8 do
  local id = ARGV[first]
  local due
  if ARGV[first + 3] ~= '' then
    due = tonumber(ARGV[first + 3])
  else
    due = now + tonumber(ARGV[first + 2])
  end
  local state = 'D'
  if due <= now then
    state = 'R'
  end
  local policy = ARGV[first + 4]
  local number = numbers[first]
  local token = ARGV[first + 6]
  local entry = entry_join(number, token, ARGV[first + 7], ARGV[first + 1])

  local code = 1
  local delivered_before = false
  if ARGV[first + 5] == 'REPLACE' then
    local old_entry = redis.call('HGET', payloads, id)
    local old_meta = redis.call('HGET', jobs, id)
    if written_by(old_entry, token) then
      code = 2
      delivered_before = true -- replacing again would take the job back from a consumer already running it
    elseif old_entry or old_meta then
      redis.call('HSET', payloads, id, entry)
      code = 2
      local old = meta_decode(old_meta)
      if old then
        unindex({ D = delayed, R = ready, L = reserved, X = dead }, id, old.state)
      else
        for _, key in ipairs({ delayed, ready, reserved, dead }) do
          redis.call('ZREM', key, id)
        end
      end
      if old_meta then
        redis.call('HDEL', jobs, id)
      end
    else
      redis.call('HSET', payloads, id, entry)
    end
  elseif redis.call('HEXISTS', jobs, id) == 1 or redis.call('HSETNX', payloads, id, entry) == 0 then
    if written_by(redis.call('HGET', payloads, id), token) then
      delivered_before = true
    else
      code = 0 -- a job with meta but no payload (only corrupt data has that) still counts as existing
    end
  end

  if delivered_before then
    reply[#reply + 1] = code
    reply[#reply + 1] = -1
  elseif code ~= 0 then
    if number == '' then
      redis.call('HSET', jobs, id, meta_encode(policy_meta(policy, state, due)))
    end
    if state == 'R' then
      redis.call('ZADD', ready, int(due), id)
      any_ready = true
    else
      redis.call('ZADD', delayed, int(due), id)
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

announce_new_jobs(signal, any_ready, head, new_head, ARGV[1], ARGV[2])
return reply
