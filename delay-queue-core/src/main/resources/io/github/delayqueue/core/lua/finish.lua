-- finish: removes jobs their consumer completed, each only if that consumer still holds its lease. A
-- batch is read with one command and removed with one command per key, however many jobs it holds.
--
-- KEYS[1] jobs   KEYS[2] payloads   KEYS[3] reserved
-- ARGV    id, lease token, id, lease token, ...
--
-- Returns one code per job: 1 finished, 0 no such job (or meta unreadable), -1 stale lease (the job was taken
-- back or is held by another claim). A lease is checked by its meta's state and token only: a leased job whose
-- meta cannot be read past its token is finished by the holder of that token.

local jobs, payloads, reserved = KEYS[1], KEYS[2], KEYS[3]
local ids = {}
for i = 1, #ARGV, 2 do
  ids[#ids + 1] = ARGV[i]
end
local metas = redis.call('HMGET', jobs, unpack(ids))
local codes, done, seen = {}, {}, {}
for i, id in ipairs(ids) do
  local code = 0
  local token = lease_token(metas[i])
  if token then
    code = -1
    if token == ARGV[2 * i] and not seen[id] then
      code = 1
      seen[id] = true
      done[#done + 1] = id
    end
  elseif meta_decode(metas[i]) then
    code = -1 -- in another state
  end
  codes[i] = code
end
if #done > 0 then
  redis.call('ZREM', reserved, unpack(done))
  redis.call('HDEL', jobs, unpack(done))
  redis.call('HDEL', payloads, unpack(done))
end
return codes
