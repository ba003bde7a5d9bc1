-- import: writes jobs moved from another bucket of the topic (DelayQueue.migrateBuckets) into this one,
-- each as export read it there: in the same index with the same score (due time, lease deadline or time
-- of death), with the same meta (attempts, lease token, policy, last error), add token and payload. A job
-- waiting for its first claim gets its policy numbered in this bucket, or its meta when this bucket numbers
-- no more policies, as add does.
--
-- KEYS[1] jobs   KEYS[2] payloads   KEYS[3] delayed   KEYS[4] ready   KEYS[5] reserved   KEYS[6] dead
-- KEYS[7] policies   KEYS[8] lease token sequence   KEYS[9] signal
-- ARGV[1] poller wake-up channel   ARGV[2] this bucket's index
-- then 6 arguments per job, as export returned them: id, pool entry, meta, index name, score, policy
--
-- Returns one code per job: 1 written; 2 written over an earlier copy of the same job (same add token
-- and payload: a move that stopped before removing the job from its old bucket); -1 refused, nothing
-- written: another job with the same id is here.

local jobs, payloads, policies, seq, signal = KEYS[1], KEYS[2], KEYS[7], KEYS[8], KEYS[9]
local indexes = indexes_by_name(KEYS[3], KEYS[4], KEYS[5], KEYS[6])
local head = earliest(indexes.delayed)
local new_head = head
local any_ready = false
local known_policies = {}
local codes = {}

-- What tells a job from another job with the same id: its add token, headers and payload, or its meta when
-- it has no readable pool entry.
local function identity(entry, meta)
  local _, payload, token, headers = entry_split(entry)
  if payload then
    return token .. '|' .. headers .. payload
  end
  return entry .. '\n' .. meta
end

for first = 3, #ARGV, 6 do
  local id, entry, meta, index, score, policy =
    ARGV[first], ARGV[first + 1], ARGV[first + 2], ARGV[first + 3], ARGV[first + 4], ARGV[first + 5]
  local code = 1
  local here_entry = redis.call('HGET', payloads, id) or ''
  local here_meta = redis.call('HGET', jobs, id) or ''
  if here_entry ~= '' or here_meta ~= '' then
    if identity(here_entry, here_meta) ~= identity(entry, meta) then
      code = -1
    else
      code = 2
      for _, key in pairs(indexes) do
        redis.call('ZREM', key, id)
      end
      redis.call('HDEL', jobs, id)
    end
  end

  if code > 0 then
    if policy ~= '' then
      local _, payload, token, headers = entry_split(entry)
      local number = policy_number(policies, policy, known_policies)
      entry = entry_join(number, token, headers, payload)
      if number == '' then
        local state = 'D'
        if index == 'ready' then
          state = 'R'
        end
        meta = meta_encode(policy_meta(policy, state, tonumber(score)))
      end
    end
    if entry ~= '' then
      redis.call('HSET', payloads, id, entry)
    end
    if meta ~= '' then
      redis.call('HSET', jobs, id, meta)
      local m = meta_decode(meta)
      if m and m.state == 'L' and m.token ~= '' then
        -- this bucket must never hand the holder's token out again, or a stale holder could finish a later claim
        if tonumber(redis.call('GET', seq) or '0') < tonumber(m.token) then
          redis.call('SET', seq, m.token)
        end
      end
    end
    if index ~= '' then
      redis.call('ZADD', indexes[index], score, id)
      if index == 'ready' then
        any_ready = true
      elseif index == 'delayed' and (new_head < 0 or tonumber(score) < new_head) then
        new_head = tonumber(score)
      end
    end
  end
  codes[#codes + 1] = code
end

announce_new_jobs(signal, any_ready, head, new_head, ARGV[1], ARGV[2])
return codes
