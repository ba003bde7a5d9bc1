-- schedule_read: reads schedules (schedule_record.lua describes them) without changing them.
--
-- KEYS[1] schedules   KEYS[2] delayed   KEYS[3] ready
-- ARGV[1..] schedule ids; none for every schedule of the bucket
--
-- Returns { now ms, { id, line, definition, entry, score of the pending occurrence or '' }, ... } with one
-- list per schedule found (a pending occurrence that is neither delayed nor ready has '' as its score).

local schedules, delayed, ready = KEYS[1], KEYS[2], KEYS[3]
local ids = ARGV
if #ids == 0 then
  ids = {}
  for _, field in ipairs(redis.call('HKEYS', schedules)) do
    local id = string.match(field, '^line:(.*)$')
    if id then
      ids[#ids + 1] = id
    end
  end
end
local reply = { now_ms() }
for _, id in ipairs(ids) do
  local fields = redis.call('HMGET', schedules, 'line:' .. id, 'def:' .. id, 'entry:' .. id)
  if fields[1] and fields[2] and fields[3] then
    local _, pending = schedule_line_decode(fields[1])
    local score = ''
    if pending and pending ~= '' then
      score = redis.call('ZSCORE', delayed, pending) or redis.call('ZSCORE', ready, pending) or ''
    end
    reply[#reply + 1] = { id, fields[1], fields[2], fields[3], score }
  end
end
return reply
