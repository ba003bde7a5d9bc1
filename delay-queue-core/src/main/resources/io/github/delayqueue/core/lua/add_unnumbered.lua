-- add_unnumbered: add.lua for a call with a job whose policy gets no number, as its bucket already numbers
-- MAX_POLICIES policies (add.lua answers such a call { 'UNNUMBERED' }, having written no job): each such job
-- gets its meta at add, from its policy line. Takes add.lua's keys and arguments and answers as it does, through
-- common.lua's functions, as this is rare; a job whose policy gets no number and whose line cannot be read is
-- refused with an error before any job is written.
--
-- KEYS[1] jobs      hash  id -> meta (written here for a job whose policy gets no number)
-- KEYS[2] payloads  hash  id -> policy number:add token[:headers length]|[headers]payload
-- KEYS[3] delayed   zset  id by due time
-- KEYS[4] ready     zset  id by due time
-- KEYS[5] signal    zset  consumer wake-up marker
-- KEYS[6] policies  hash  the bucket's numbered policies
-- KEYS[7] reserved  zset  id by lease deadline   } only when a job of the call replaces
-- KEYS[8] dead      zset  id by time of death    }
-- ARGV as add.lua's: the poller wake-up channel, this bucket's index, then 5 arguments per job: id, when, policy
-- line, 'REJECT' or 'REPLACE', and the pool entry but the policy number.

local jobs, payloads, delayed, ready, signal, policies, reserved, dead =
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
for first = 3, #ARGV, 5 do
  local number = policy_number(policies, ARGV[first + 2], known_policies)
  if number == '' and not policy_meta(ARGV[first + 2], 'D', 0) then
    return redis.error_reply('ERR unreadable policy line of job ' .. ARGV[first] .. ': ' .. ARGV[first + 2])
  end
  numbers[first] = number
end

for first = 3, #ARGV, 5 do
  local id, when, tail = ARGV[first], ARGV[first + 1], ARGV[first + 4]
  local due
  if string.sub(when, 1, 1) == '@' then
    due = tonumber(string.sub(when, 2))
  else
    due = now + tonumber(when)
  end
  local state = 'D'
  if due <= now then
    state = 'R'
  end
  local policy = ARGV[first + 2]
  local number = numbers[first]
  local token = string.match(tail, '^:([^:|]*)') or ''
  local entry = number .. tail

  local code = 1
  local delivered_before = false
  if ARGV[first + 3] == 'REPLACE' then
    local old_entry = redis.call('HGET', payloads, id)
    local old_meta = redis.call('HGET', jobs, id)
    if written_by(old_entry, token) then
      code = 2
      delivered_before = true -- replacing again would take the job back from a consumer already running it
    elseif old_entry or old_meta then
      redis.call('HSET', payloads, id, entry)
      code = 2
      -- out of every index, whatever its meta says: an id corrupt data left in two is in none after
      for _, key in ipairs({ delayed, ready, reserved, dead }) do
        redis.call('ZREM', key, id)
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
