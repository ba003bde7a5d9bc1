-- stats: counts one bucket's jobs by state, without changing anything.
--
-- KEYS[1] delayed   KEYS[2] ready   KEYS[3] reserved   KEYS[4] dead
--
-- Returns { delayed, ready, reserved, dead, due time of the oldest ready job or -1,
--           due time of the earliest delayed job or -1, now ms }.

local delayed, ready, reserved, dead = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
return { redis.call('ZCARD', delayed), redis.call('ZCARD', ready), redis.call('ZCARD', reserved),
         redis.call('ZCARD', dead), earliest(ready), earliest(delayed), now_ms() }
