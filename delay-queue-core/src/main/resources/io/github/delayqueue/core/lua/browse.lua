-- browse: reads jobs of one index of a bucket, for a page of them, without changing anything.
--
-- KEYS[1] jobs   KEYS[2] payloads   KEYS[3] index (delayed, ready, reserved or dead)   KEYS[4] policies
-- ARGV[1] the state of the index's jobs (D, R, L or X)   ARGV[2] most payload bytes in a preview
-- ARGV[3..] ids
--
-- Returns, per id in order, {} when the index no longer holds it, else
-- { score in the index (ms), due ms, attempts, max attempts, last error, payload preview, payload bytes }.
-- A job whose meta cannot be read is returned with 0 attempts and what is wrong as its last error.

local jobs, payloads, index, policies = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local state, preview_bytes = ARGV[1], tonumber(ARGV[2])
local known = {}
local reply = {}
for i = 3, #ARGV do
  local id = ARGV[i]
  local score = redis.call('ZSCORE', index, id)
  if not score then
    reply[#reply + 1] = {}
  else
    score = tonumber(score)
    local entry = redis.call('HGET', payloads, id)
    local number, _, bar, headers_length = entry_head(entry)
    local raw = redis.call('HGET', jobs, id)
    local m
    if raw then
      m = meta_decode(raw)
    elseif number and number ~= '' then
      m = first_meta(policies, number, state, score, known)
    end
    local due, attempts, max, err = score, 0, 0, ''
    if m then
      due, attempts, max, err = m.due, m.attempts, m.max, m.err
    else
      err = 'corrupt: ' .. corrupt_reason('an index', raw or entry)
    end
    local preview, bytes = '', 0
    if bar then
      local payload_at = bar + 1 + headers_length -- the payload follows the job's headers, if it has any
      preview = string.sub(entry, payload_at, payload_at + preview_bytes - 1)
      bytes = #entry - payload_at + 1
    end
    reply[#reply + 1] = { score, due, attempts, max, err, preview, bytes }
  end
end
return reply
