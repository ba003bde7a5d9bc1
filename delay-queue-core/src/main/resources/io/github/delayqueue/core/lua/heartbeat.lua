-- heartbeat: records that a consumer of a topic is alive until its expiry, replacing its previous heartbeat.
--
-- KEYS[1] consumers (hash: consumer -> deadline ms|heartbeat line; one key outside every bucket's slot)
-- ARGV[1] consumer   ARGV[2] expiry ms   ARGV[3] heartbeat line
--
-- Returns the Redis clock (ms) at the heartbeat. The hash expires with its longest-lived heartbeat, so a topic
-- whose consumers all died leaves nothing behind; each entry's own deadline is judged on read (consumers.lua).

local consumers, consumer, expiry, line = KEYS[1], ARGV[1], tonumber(ARGV[2]), ARGV[3]
local now = now_ms()
redis.call('HSET', consumers, consumer, int(now + expiry) .. '|' .. line)
if redis.call('PTTL', consumers) < expiry then
  redis.call('PEXPIRE', consumers, expiry)
end
return now
