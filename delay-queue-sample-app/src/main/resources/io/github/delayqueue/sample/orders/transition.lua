-- transition: moves an order from one state to another and stamps the time, only when it is in the expected state,
-- so that a payment and the timeout arriving together cannot both win.
--
-- KEYS[1] the order's hash
-- ARGV[1] expected state   ARGV[2] new state   ARGV[3] field stamped with the time   ARGV[4] the time (ISO-8601)
--
-- Returns the state the order was in (the expected one when it moved), or nil when there is no such order.

local current = redis.call('HGET', KEYS[1], 'state')
if not current then
  return false
end
if current == ARGV[1] then
  redis.call('HSET', KEYS[1], 'state', ARGV[2], ARGV[3], ARGV[4])
end
return current
