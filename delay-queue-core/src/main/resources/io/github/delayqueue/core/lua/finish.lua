-- finish: removes a job its consumer completed, if that consumer still holds the lease.
--
-- KEYS[1] jobs   KEYS[2] payloads   KEYS[3] reserved
-- ARGV[1] id   ARGV[2] lease token
--
-- Returns 1 finished, 0 no such job, -1 stale lease (the job was taken back or is held by another claim).

local jobs, payloads, reserved = KEYS[1], KEYS[2], KEYS[3]
local id = ARGV[1]
local m, refused = held_meta(jobs, id, ARGV[2])
if not m then
  return refused
end
redis.call('ZREM', reserved, id)
redis.call('HDEL', jobs, id)
redis.call('HDEL', payloads, id)
return 1
