-- stats: counts one bucket's jobs by state and reads the controls its claims obey, without changing anything.
--
-- KEYS[1] delayed   KEYS[2] ready   KEYS[3] reserved   KEYS[4] dead   KEYS[5] control
--
-- Returns { delayed, ready, reserved, dead, due time of the oldest ready job or -1,
--           due time of the earliest delayed job or -1, now ms, 1 when paused else 0,
--           the rate limit as set (its text) or nil }.

local delayed, ready, reserved, dead, control = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local controls = redis.call('HMGET', control, 'paused', 'rate')
return { redis.call('ZCARD', delayed), redis.call('ZCARD', ready), redis.call('ZCARD', reserved),
         redis.call('ZCARD', dead), earliest(ready), earliest(delayed), now_ms(), controls[1] and 1 or 0,
         controls[2] }
