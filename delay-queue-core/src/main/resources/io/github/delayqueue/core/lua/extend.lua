-- extend: moves the lease deadline of a held job to now + ARGV[3] ms, if the caller still holds it.
--
-- KEYS[1] jobs   KEYS[2] reserved
-- ARGV[1] id   ARGV[2] lease token   ARGV[3] extension ms
--
-- Returns { code, new lease deadline ms }: 1 extended, 0 no such job, -1 stale lease.

local jobs, reserved = KEYS[1], KEYS[2]
local id = ARGV[1]
local m, refused = held_meta(jobs, id, ARGV[2])
if not m then
  return { refused, -1 }
end
local deadline = now_ms() + tonumber(ARGV[3])
redis.call('ZADD', reserved, deadline, id)
return { 1, deadline }
