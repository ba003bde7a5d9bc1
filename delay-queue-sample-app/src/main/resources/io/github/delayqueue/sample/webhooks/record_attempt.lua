-- record_attempt: appends one delivery attempt to a webhook delivery's log and sets the delivery's status.
--
-- KEYS[1] the delivery's hash   KEYS[2] its attempt log (a list)
-- ARGV[1] the attempt, as one log line   ARGV[2] new status   ARGV[3] delivered-at time, or '' when not delivered
-- ARGV[4] how long both keys are kept from now, in ms   ARGV[5] most lines the log keeps
--
-- Returns 1 when recorded, 0 when there is no such delivery (it expired, or was never registered).

local delivery, log = KEYS[1], KEYS[2]
if redis.call('EXISTS', delivery) == 0 then
  return 0
end
redis.call('RPUSH', log, ARGV[1])
redis.call('LTRIM', log, -tonumber(ARGV[5]), -1)
redis.call('HSET', delivery, 'status', ARGV[2])
if ARGV[3] ~= '' then
  redis.call('HSET', delivery, 'deliveredAt', ARGV[3])
end
redis.call('PEXPIRE', delivery, ARGV[4])
redis.call('PEXPIRE', log, ARGV[4])
return 1
