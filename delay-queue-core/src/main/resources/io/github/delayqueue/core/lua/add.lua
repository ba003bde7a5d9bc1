-- add: puts new jobs into their bucket, each delayed or (when already due) ready: one job, or a batch that pays
-- for the clock read, the poller wake-up and the consumer signal once. The hottest script, so written out with
-- no function of its own and only the two of common.lua a job whose policy gets no number needs (with the three
-- they call): Lua makes a script's functions anew on every call (README, "Where an add's time goes in Redis").
--
-- KEYS[1] jobs      hash  id -> meta (written here for a job whose policy gets no number, deleted for one replaced)
-- KEYS[2] payloads  hash  id -> policy number:add token[:headers length]|[headers]payload
-- KEYS[3] delayed   zset  id by due time
-- KEYS[4] ready     zset  id by due time
-- KEYS[5] signal    zset  consumer wake-up marker
-- KEYS[6] policies  hash  the bucket's numbered policies
-- KEYS[7] reserved  zset  id by lease deadline   } only when a job of the call replaces
-- KEYS[8] dead      zset  id by time of death    }
-- ARGV[1] poller wake-up channel   ARGV[2] this bucket's index
-- then 5 arguments per job:
--   id;
--   when: its delay in ms from the Redis clock's now, or '@' and its due time in epoch ms taken as given;
--   its policy line (as `policies` holds it, see common.lua);
--   'REJECT' or 'REPLACE' for an existing id;
--   its pool entry but the policy number, as entry_join in common.lua writes it: ':' add token [':' headers
--   length] '|' headers payload, or '|' payload with neither a token nor headers; the add token is random
--   characters (no ':' or '|') the producer sends again when it retries this add.
--
-- Returns { now ms, code, due ms, code, due ms, ... } with one code per job: 1 added, 2 replaced an existing job,
-- 0 rejected (the id exists). An add whose job already carries its token was delivered before (a client re-sent
-- it after a reconnect, or the producer retried it): it changes nothing and answers as the first delivery did, 1
-- (or 2 for 'REPLACE'), with a due time of -1. A job whose policy gets no number (its bucket numbers MAX_POLICIES
-- policies already) gets its meta here, from its policy line; a line that cannot be read then fails the call with
-- an error before any job is written.

local jobs, payloads, delayed, ready, signal, policies = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]

-- The add token of a pool entry, or of its part after the policy number; nil for none (see entry_head in
-- common.lua). An entry holding the token of an add was written by an earlier delivery of that add.
local TOKEN = '^[^:|]*:([^:|]+):?%d*|'

-- arithmetic reads the clock's digits as tonumber would, without a call to it or to math.floor
local t = redis.call('TIME')
local now = t[1] * 1000 + (t[2] - t[2] % 1000) / 1000

-- each job's policy number first, numbering the policies new to the bucket (or checking the line of one that gets
-- no number), before any job is written
local numbers = {}
for first = 3, #ARGV, 5 do
  local policy = ARGV[first + 2]
  if not numbers[policy] then
    local number = redis.call('HGET', policies, '=' .. policy)
    if not number then
      local count = redis.call('HLEN', policies) / 2
      if count >= MAX_POLICIES then
        number = ''
        if not policy_meta(policy, 'D', 0) then
          return redis.error_reply('ERR unreadable policy line of job ' .. ARGV[first] .. ': ' .. policy)
        end
      else
        number = string.format('%d', count + 1)
        redis.call('HSET', policies, number, policy, '=' .. policy, number)
      end
    end
    numbers[policy] = number
  end
end

local head = tonumber(redis.call('ZRANGE', delayed, '0', '0', 'WITHSCORES')[2]) or -1
local new_head = head
local any_ready = false
local reply = { now }
local replied = 1

for first = 3, #ARGV, 5 do
  local id, when, if_exists, tail = ARGV[first], ARGV[first + 1], ARGV[first + 3], ARGV[first + 4]
  local due
  if string.byte(when) == 64 then -- '@'
    due = tonumber(string.sub(when, 2))
  else
    due = now + when -- read as a number by the addition
  end
  local policy = ARGV[first + 2]
  local number = numbers[policy]
  local entry = number .. tail

  local code = 1
  local delivered = false -- before: by a client that re-sent the call, or a producer that retried the add
  if if_exists == 'REPLACE' then
    local old_entry = redis.call('HGET', payloads, id)
    local old_meta = redis.call('HGET', jobs, id)
    if old_entry and string.match(old_entry, TOKEN) == (string.match(tail, TOKEN) or false) then
      code = 2
      delivered = true -- replacing again would take the job back from a consumer already running it
    else
      redis.call('HSET', payloads, id, entry)
      if old_entry or old_meta then
        code = 2
        -- out of every index, whatever its meta says: an id corrupt data left in two is in none after
        redis.call('ZREM', delayed, id)
        redis.call('ZREM', ready, id)
        redis.call('ZREM', KEYS[7], id)
        redis.call('ZREM', KEYS[8], id)
        if old_meta then
          redis.call('HDEL', jobs, id)
        end
      end
    end
  elseif redis.call('HEXISTS', jobs, id) == 1 or redis.call('HSETNX', payloads, id, entry) == 0 then
    local old_entry = redis.call('HGET', payloads, id)
    if old_entry and string.match(old_entry, TOKEN) == (string.match(tail, TOKEN) or false) then
      delivered = true
    else
      code = 0 -- a job with meta but no payload (only corrupt data has that) still counts as existing
    end
  end

  if delivered or code == 0 then
    reply[replied + 1], reply[replied + 2] = code, -1
  else
    local score = string.format('%d', due)
    if number == '' then
      redis.call('HSET', jobs, id, meta_encode(policy_meta(policy, (due <= now) and 'R' or 'D', due)))
    end
    if due <= now then
      redis.call('ZADD', ready, score, id)
      any_ready = true
    else
      redis.call('ZADD', delayed, score, id)
      if new_head < 0 or due < new_head then
        new_head = due
      end
    end
    reply[replied + 1], reply[replied + 2] = code, due
  end
  replied = replied + 2
end

if any_ready then
  redis.call('ZADD', signal, '0', 'ready')
end
if new_head ~= head then
  redis.call('PUBLISH', ARGV[1], ARGV[2])
end
return reply
