-- claim: leases up to ARGV[1] ready jobs, oldest due first, to one consumer.
-- Each claimed job gets attempts + 1, a fresh lease token and a lease deadline of now + its TTR.
--
-- KEYS[1] jobs   KEYS[2] payloads   KEYS[3] ready   KEYS[4] reserved   KEYS[5] dead
-- KEYS[6] signal   KEYS[7] lease token sequence (string, INCR)
-- ARGV[1] most jobs to claim
--
-- Returns { now ms, jobs, corrupt } where jobs is a list of
-- { id, payload, attempts, max attempts, due ms, lease token, lease deadline ms, ttr ms }
-- and corrupt lists the ids met with unreadable meta or no payload (moved to dead) or another state (dropped).

local jobs, payloads, ready, reserved, dead, signal, seq = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local now = now_ms()

local popped = redis.call('ZPOPMIN', ready, tonumber(ARGV[1]))
local claimed = {}
local corrupt = {}
for i = 1, #popped, 2 do
  local id = popped[i]
  local raw = redis.call('HGET', jobs, id)
  local m = meta_decode(raw)
  local payload = redis.call('HGET', payloads, id)
  if m and m.state == 'R' and payload then
    m.state = 'L'
    m.attempts = m.attempts + 1
    m.token = tostring(redis.call('INCR', seq))
    local deadline = now + m.ttr
    redis.call('HSET', jobs, id, meta_encode(m))
    redis.call('ZADD', reserved, deadline, id)
    claimed[#claimed + 1] = { id, payload, m.attempts, m.max, m.due, m.token, deadline, m.ttr }
  elseif m and m.state ~= 'R' then
    corrupt[#corrupt + 1] = id -- a stale index entry: the job lives on in the state its meta names
  else
    local reason = corrupt_reason('in ready', raw)
    if m then
      reason = 'in ready without a payload'
    end
    bury_corrupt(jobs, dead, id, reason, now)
    corrupt[#corrupt + 1] = id
  end
end

if redis.call('ZCARD', ready) > 0 then
  signal_ready(signal) -- wake the next consumer: work is left
end
return { now, claimed, corrupt }
