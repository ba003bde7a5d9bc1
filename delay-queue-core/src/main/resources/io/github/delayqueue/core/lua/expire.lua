-- expire: takes back jobs whose lease ran out (the consumer died or overran its TTR), at most
-- ARGV[1] per call, treating each like a failed attempt: back-off then retry, or dead.
--
-- KEYS[1] jobs   KEYS[2] delayed   KEYS[3] reserved   KEYS[4] dead
-- ARGV[1] batch size   ARGV[2] random fraction in [0, 1) for jitter
--
-- Returns { expired, next lease deadline ms or -1, now us, more (1 when the batch was full), corrupt... }

local jobs, delayed, reserved, dead = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local batch = tonumber(ARGV[1])
local now = now_ms()

local expired_ids = redis.call('ZRANGEBYSCORE', reserved, '-inf', now, 'LIMIT', 0, batch)
local expired = 0
local corrupt = {}
for _, id in ipairs(expired_ids) do
  local raw = redis.call('HGET', jobs, id)
  local m = meta_decode(raw)
  if m and m.state == 'L' then
    local err = 'lease expired: no finish within the TTR of ' .. int(m.ttr) .. ' ms (attempt ' .. int(m.attempts) .. ')'
    retry_or_bury(jobs, delayed, reserved, dead, id, m, err, true, tonumber(ARGV[2]), now)
    expired = expired + 1
  else
    redis.call('ZREM', reserved, id)
    if m then
      corrupt[#corrupt + 1] = id -- a stale index entry: the job lives on in the state its meta names
    else
      bury_corrupt(jobs, dead, id, corrupt_reason('in reserved', raw), now)
      corrupt[#corrupt + 1] = id
    end
  end
end

return batch_reply(expired, reserved, #expired_ids == batch, corrupt)
