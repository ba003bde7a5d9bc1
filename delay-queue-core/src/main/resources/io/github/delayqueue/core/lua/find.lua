-- find: reads one job without changing it.
--
-- KEYS[1] jobs   KEYS[2] reserved   KEYS[3] dead   KEYS[4] payloads   KEYS[5] delayed   KEYS[6] ready
-- KEYS[7] policies
-- ARGV[1] id
--
-- Returns {} when there is no such job, { 'corrupt', what is wrong } when it cannot be read, else
-- { state, attempts, max attempts, due ms, last error, lease deadline ms or -1, died at ms or -1, ttr ms,
-- headers block or '' }.

local jobs, reserved, dead, payloads, delayed, ready, policies =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local id = ARGV[1]
local raw = redis.call('HGET', jobs, id)
if not raw then
  local entry = redis.call('HGET', payloads, id)
  if not entry then
    return {}
  end
  local number = entry_head(entry)
  local state, due = pending_state(delayed, ready, id)
  if not state then
    return { 'corrupt', 'a pool entry in no index' }
  end
  local m = number and number ~= '' and first_meta(policies, number, state, due, {})
  if not m then
    return { 'corrupt', 'a pool entry without meta or a known policy number: ' .. string.sub(entry, 1, 100) }
  end
  return { m.state, m.attempts, m.max, m.due, m.err, -1, -1, m.ttr, entry_headers(entry) }
end
local m = meta_decode(raw)
if not m then
  return { 'corrupt', 'unreadable meta: ' .. raw }
end
local deadline, died = -1, -1
if m.state == 'L' then
  deadline = tonumber(redis.call('ZSCORE', reserved, id) or -1)
elseif m.state == 'X' then
  died = tonumber(redis.call('ZSCORE', dead, id) or -1)
end
return { m.state, m.attempts, m.max, m.due, m.err, deadline, died, m.ttr,
         entry_headers(redis.call('HGET', payloads, id)) }
