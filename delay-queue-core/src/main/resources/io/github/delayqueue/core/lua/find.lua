-- find: reads one job without changing it.
--
-- KEYS[1] jobs   KEYS[2] reserved   KEYS[3] dead
-- ARGV[1] id
--
-- Returns {} when there is no such job, { 'corrupt', raw meta } when its meta cannot be read, else
-- { state, attempts, max attempts, due ms, last error, lease deadline ms or -1, died at ms or -1, ttr ms }.

local jobs, reserved, dead = KEYS[1], KEYS[2], KEYS[3]
local id = ARGV[1]
local raw = redis.call('HGET', jobs, id)
if not raw then
  return {}
end
local m = meta_decode(raw)
if not m then
  return { 'corrupt', raw }
end
local deadline, died = -1, -1
if m.state == 'L' then
  deadline = tonumber(redis.call('ZSCORE', reserved, id) or -1)
elseif m.state == 'X' then
  died = tonumber(redis.call('ZSCORE', dead, id) or -1)
end
return { m.state, m.attempts, m.max, m.due, m.err, deadline, died, m.ttr }
