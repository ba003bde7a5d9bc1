-- fail: records a failed attempt; the job is retried after its back-off while attempts remain,
-- else (or when ARGV[4] says the failure cannot be retried) it goes to dead.
--
-- KEYS[1] jobs   KEYS[2] delayed   KEYS[3] reserved   KEYS[4] dead
-- ARGV[1] id   ARGV[2] lease token   ARGV[3] error text   ARGV[4] '1' retryable, '0' not
-- ARGV[5] random fraction in [0, 1) for jitter   ARGV[6] poller wake-up channel   ARGV[7] bucket index
--
-- Returns { code, ms }: 1 retry due at ms, 2 dead since ms, 0 no such job, -1 stale lease.

local jobs, delayed, reserved, dead = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id = ARGV[1]
local m, refused = held_meta(jobs, id, ARGV[2])
if not m then
  return { refused, -1 }
end
local now = now_ms()
local head = earliest(delayed)
local code, at = retry_or_bury(jobs, delayed, reserved, dead, id, m, ARGV[3], ARGV[4] == '1', tonumber(ARGV[5]),
                               now)
if code == 1 and (head < 0 or at < head) then
  wake_pollers(ARGV[6], ARGV[7])
end
return { code, at }
