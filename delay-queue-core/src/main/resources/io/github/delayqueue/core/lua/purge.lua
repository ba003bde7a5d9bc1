-- purge: deletes dead jobs, oldest first, at most ARGV[3] per call: those dead for longer than the
-- retention ARGV[1] and, beyond those, as many as keep the dead set at ARGV[2] jobs.
--
-- KEYS[1] jobs   KEYS[2] payloads   KEYS[3] dead
-- ARGV[1] retention ms, or 'all' to purge every dead job   ARGV[2] most dead jobs to keep   ARGV[3] batch size
--
-- Returns { purged, dead jobs left }.

local jobs, payloads, dead = KEYS[1], KEYS[2], KEYS[3]
local cap, batch = tonumber(ARGV[2]), tonumber(ARGV[3])

local max_score = '+inf'
if ARGV[1] ~= 'all' then
  max_score = '(' .. int(now_ms() - tonumber(ARGV[1]))
end
local victims = redis.call('ZRANGEBYSCORE', dead, '-inf', max_score, 'LIMIT', 0, batch)
local over_cap = redis.call('ZCARD', dead) - #victims - cap
if over_cap > 0 and #victims < batch then
  local extra = redis.call('ZRANGE', dead, #victims, #victims + math.min(over_cap, batch - #victims) - 1)
  for _, id in ipairs(extra) do
    victims[#victims + 1] = id
  end
end
for _, id in ipairs(victims) do
  redis.call('ZREM', dead, id)
  redis.call('HDEL', jobs, id)
  redis.call('HDEL', payloads, id)
end
return { #victims, redis.call('ZCARD', dead) }
