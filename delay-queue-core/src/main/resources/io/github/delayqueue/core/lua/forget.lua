-- forget: removes from this bucket jobs that import has written into their new bucket
-- (DelayQueue.migrateBuckets), each only if it is still exactly as export read it; a job that changed
-- meanwhile stays, for the move to read and write again.
--
-- KEYS[1] jobs   KEYS[2] payloads   KEYS[3] delayed   KEYS[4] ready   KEYS[5] reserved   KEYS[6] dead
-- ARGV    id, fingerprint from export, id, fingerprint, ...
--
-- Returns one code per job: 1 removed, 0 changed since export read it (left as it is), -1 no longer here.

local jobs, payloads = KEYS[1], KEYS[2]
local indexes = indexes_by_name(KEYS[3], KEYS[4], KEYS[5], KEYS[6])
local codes = {}
for first = 1, #ARGV, 2 do
  local id = ARGV[first]
  local entry, _, _, _, fingerprint = whole_job(jobs, payloads, indexes, id)
  local code = -1
  if entry then
    code = 0
    if fingerprint == ARGV[first + 1] then
      code = 1
      for _, key in pairs(indexes) do
        redis.call('ZREM', key, id)
      end
      redis.call('HDEL', jobs, id)
      redis.call('HDEL', payloads, id)
    end
  end
  codes[#codes + 1] = code
end
return codes
