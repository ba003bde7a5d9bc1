-- dead_letters: reads a page of dead jobs, oldest death first, without changing them.
--
-- KEYS[1] jobs   KEYS[2] payloads   KEYS[3] dead
-- ARGV[1] offset   ARGV[2] limit
--
-- Returns a list of { id, died at ms, attempts, last error, payload or '', headers block or '' }.

local jobs, payloads, dead = KEYS[1], KEYS[2], KEYS[3]
local offset, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local page = redis.call('ZRANGE', dead, offset, offset + limit - 1, 'WITHSCORES')
local result = {}
for i = 1, #page, 2 do
  local id = page[i]
  local raw = redis.call('HGET', jobs, id)
  local m = meta_decode(raw)
  local attempts, err = 0, 'corrupt meta: ' .. tostring(raw)
  if m then
    attempts, err = m.attempts, m.err
  end
  local entry = redis.call('HGET', payloads, id)
  local _, payload, _, headers = entry_split(entry)
  result[#result + 1] = { id, tonumber(page[i + 1]), attempts, err, payload or entry or '', headers or '' }
end
return result
