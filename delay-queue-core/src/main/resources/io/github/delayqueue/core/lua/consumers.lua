-- consumers: reads the live heartbeats of a topic's consumers, deleting those past their deadline (their
-- container died without removing them, or was cut off from Redis for longer than its expiry).
--
-- KEYS[1] consumers (hash: consumer -> deadline ms|heartbeat line)
--
-- Returns { now ms, consumer, deadline ms|heartbeat line, consumer, ... } of the live heartbeats.

local consumers = KEYS[1]
local now = now_ms()
local all = redis.call('HGETALL', consumers)
local reply = { now }
for i = 1, #all, 2 do
  local deadline = exact(string.match(all[i + 1], '^(%d+)|'))
  if deadline and deadline > now then
    reply[#reply + 1] = all[i]
    reply[#reply + 1] = all[i + 1]
  else
    redis.call('HDEL', consumers, all[i])
  end
end
return reply
