-- cancel: removes a job in any state, leaving nothing of it behind. A consumer still running it
-- will find its finish or fail refused.
--
-- KEYS[1] jobs   KEYS[2] payloads   KEYS[3] delayed   KEYS[4] ready   KEYS[5] reserved   KEYS[6] dead
-- ARGV[1] id
--
-- Returns the state the job was in ('D', 'R', 'L', 'X'), or '' when there is no such job.

local jobs, payloads = KEYS[1], KEYS[2]
local id = ARGV[1]
local raw = redis.call('HGET', jobs, id)
local state = '?'
if raw then
  local m = meta_decode(raw)
  if m then
    state = m.state
  end
elseif redis.call('HEXISTS', payloads, id) == 1 then
  state = pending_state(KEYS[3], KEYS[4], id) or '?'
else
  return ''
end
for i = 3, 6 do
  redis.call('ZREM', KEYS[i], id)
end
redis.call('HDEL', jobs, id)
redis.call('HDEL', payloads, id)
return state
