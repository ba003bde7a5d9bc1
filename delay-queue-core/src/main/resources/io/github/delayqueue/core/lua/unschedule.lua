-- unschedule: removes a schedule (schedule_record.lua describes it) and its pending occurrence. An occurrence
-- already claimed runs on as an ordinary job.
--
-- KEYS[1] schedules   KEYS[2] payloads   KEYS[3] jobs   KEYS[4] delayed   KEYS[5] ready
-- ARGV[1] schedule id
--
-- Returns 1 removed, 0 no such schedule.

local schedules, payloads, jobs, delayed, ready = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id = ARGV[1]
local line = redis.call('HGET', schedules, 'line:' .. id)
if not line then
  return 0
end
local _, pending = schedule_line_decode(line)
if pending and pending ~= '' then
  drop_occurrence(payloads, jobs, delayed, ready, pending)
end
redis.call('HDEL', schedules, 'line:' .. id, 'def:' .. id, 'entry:' .. id)
return 1
