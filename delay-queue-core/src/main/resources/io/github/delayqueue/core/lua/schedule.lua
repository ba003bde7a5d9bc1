-- schedule: writes a schedule (schedule_record.lua describes it) as the Java side planned it, only if its line
-- is still the one the plan was made from: makes a new schedule, changes one (a new pending occurrence replaces
-- the old one), pauses or resumes one, refills its fire times, and applies its misfire policy.
--
-- KEYS[1] schedules   KEYS[2] payloads   KEYS[3] jobs   KEYS[4] delayed   KEYS[5] ready   KEYS[6] policies
-- ARGV[1] schedule id   ARGV[2] its line as read ('' when there was none)   ARGV[3] its definition
-- ARGV[4] the occurrences' payload   ARGV[5..10] their policy: ttr ms, max attempts, back-off initial ms,
--         multiplier, max ms, jitter
-- ARGV[11] 'A' active or 'P' paused   ARGV[12] '1' to keep the pending occurrence, '' to drop it
-- ARGV[13] the line's last fire time, unless a new pending occurrence sets it
-- ARGV[14] poller wake-up channel   ARGV[15] this bucket's index
-- ARGV[16..] items: when active and nothing is pending (after the drop), the first whose occurrence is not in the
--            pool already becomes the pending occurrence; the rest are the times to come
--
-- Returns 1 written, or 0 when the line changed since it was read (nothing written; read and plan again).

local schedules, payloads, jobs, delayed, ready, policies = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local id = ARGV[1]
local line = redis.call('HGET', schedules, 'line:' .. id)
if (line or '') ~= ARGV[2] then
  return 0
end
local pending = ''
if line then
  local _
  _, pending = schedule_line_decode(line)
  pending = pending or ''
end
local state, last = ARGV[11], ARGV[13]
if pending ~= '' and (state ~= 'A' or ARGV[12] ~= '1') then
  drop_occurrence(payloads, jobs, delayed, ready, pending)
  pending = ''
end

local policy = table.concat({ ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10] }, '|')
local number = policy_number(policies, policy, {})
local entry = number .. ':|' .. ARGV[4]
local first = 16
if state == 'A' and pending == '' then
  -- a fire time whose occurrence is in the pool already is skipped, not written again over a job in another state:
  -- one run early (runNow) and claimed before its schedule changed, planned again from the first time after now
  while ARGV[first] and redis.call('HEXISTS', payloads, id .. '@' .. ARGV[first]) == 1 do
    last = ARGV[first]
    first = first + 1
  end
end
if state == 'A' and pending == '' and ARGV[first] then
  pending = id .. '@' .. ARGV[first]
  local fire = item_fire(ARGV[first])
  local meta
  if number == '' then
    meta = meta_encode(policy_meta(policy, 'D', fire))
  end
  enqueue_occurrence(payloads, jobs, delayed, pending, fire, entry, meta, ARGV[14], ARGV[15])
  last = ARGV[first]
  first = first + 1
end
local times = {}
if state == 'A' then
  for i = first, #ARGV do
    times[#times + 1] = ARGV[i]
  end
end
redis.call('HSET', schedules, 'line:' .. id, schedule_line(state, pending, string.match(last, '^%d*'),
  table.concat(times, ',')), 'def:' .. id, ARGV[3], 'entry:' .. id, entry)
return 1
