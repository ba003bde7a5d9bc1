-- payload: reads one job's payload without changing it, in whatever state the job is.
--
-- KEYS[1] payloads
-- ARGV[1] id
--
-- Returns the payload; false when the bucket holds no pool entry for the id.

local entry = redis.call('HGET', KEYS[1], ARGV[1])
if not entry then
  return false
end
local _, payload = entry_split(entry)
return payload or entry
