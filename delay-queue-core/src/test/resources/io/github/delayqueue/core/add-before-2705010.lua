-- The add script as DelayQueueScripts sent it before commit 2705010 (common.lua's declarations it used, then
-- add.lua), kept unchanged: BatchedAddIntegrationTests checks that the add script written out whole answers and
-- writes as this one did. Its arguments: 8 keys (jobs, payloads, delayed, ready, reserved, dead, signal, policies),
-- the wake-up channel, the bucket's index, then 8 per job: id, payload, delay ('' when a due time follows), due time
-- ('' or epoch ms), policy line, 'REJECT' or 'REPLACE', add token, headers block.
--
-- A job lives in the pool, two hash fields of its bucket:
--   `payloads[id]` := policy:addToken|payload, or policy:addToken:headersLength|headers payload for a job with
--                     headers; written once at add and never touched by a move: the number of
--                     the policy (TTR, attempts, back-off) the job was added with, in the bucket's `policies`
--                     hash; the add token, a few random characters the producer sent with the add (and with its
--                     retries), so that an add delivered twice finds its own job rather than a duplicate id;
--                     then the JSON payload. The number is empty for a job whose meta was written at add (when
--                     the bucket already knows MAX_POLICIES policies). Entries written before add tokens,
--                     policy|payload, read as having an empty token.
--                     A job with headers has their block, headersLength bytes, right after the '|' and before
--                     the payload: name=value pairs joined by '&', with '%' and '&' in values written %25 and
--                     %26 (encoded and read by Java only, the scripts pass it on whole). A job without headers
--                     has neither the length nor the block: its entry is as it was before headers.
--   `jobs[id]`     := meta, a short line the scripts rewrite on every move. A job waiting for its first
--                     claim has none: it is in the state of the index holding it (delayed or ready), with
--                     no attempts, due at its score, under its numbered policy. The first claim writes it.
--
-- meta := state|attempts|maxAttempts|ttrMs|dueMs|leaseToken|backoffInitialMs|backoffMultiplier|backoffMaxMs|backoffJitter|lastError
--   state: D delayed, R ready, L leased (reserved), X dead
--   dueMs: when the job is (or was) due, on the Redis clock; lastError is free text and may hold '|'.
-- policy := ttrMs|maxAttempts|backoffInitialMs|backoffMultiplier|backoffMaxMs|backoffJitter, stored in
--   `policies` both as number -> policy and as '=' .. policy -> number.
-- Numbers in both are written in plain decimal digits, never with an exponent (by Java and by decimal()).

if redis.replicate_commands then
  redis.replicate_commands() -- Redis 6.2: allow TIME before writes (the default from 7.0 on)
end

-- The Redis clock in microseconds at the last now_ms(), for replies that tell a poller how long to sleep.
local clock_us = 0

local function now_ms()
  local t = redis.call('TIME')
  clock_us = tonumber(t[1]) * 1000000 + tonumber(t[2])
  return math.floor(clock_us / 1000)
end

-- Numbers beyond 2^53 are no longer exact in a double (nor in a sorted set's score).
local EXACT = 2 ^ 53

-- A field of a meta or policy line as a number; nil unless it is one below EXACT (so never inf or NaN).
local function exact(text)
  local n = tonumber(text)
  if n and n > -EXACT and n < EXACT then
    return n
  end
  return nil
end

-- The back-off multiplier and jitter may carry a fraction, and an exponent as versions before plain
-- decimals let through.
local DECIMAL = '([%d%.eE%+%-]+)'

local function meta_decode(raw)
  if not raw then
    return nil
  end
  local s, a, x, t, d, k, bi, bm, bx, bj, e = string.match(raw,
      '^([DRLX])|(%d+)|(%d+)|(%d+)|(%-?%d+)|(%d*)|(%d+)|' .. DECIMAL .. '|(%d+)|' .. DECIMAL .. '|(.*)$')
  if not s then
    return nil
  end
  local m = { state = s, attempts = exact(a), max = exact(x), ttr = exact(t), due = exact(d), token = k,
              bi = exact(bi), bm = exact(bm), bx = exact(bx), bj = exact(bj), err = e }
  if not (m.attempts and m.max and m.ttr and m.due and m.bi and m.bm and m.bx and m.bj) then
    return nil
  end
  return m
end

-- A whole number as plain decimal text. Hot paths also pass their numbers to redis.call through it, and
-- constants as text: Redis 7.0 writes a Lua number argument with snprintf's %.17g, which callgrind counts at
-- 2,400 to 4,200 instructions more than a string argument, and int() at about half that.
local function int(n)
  return string.format('%d', n)
end

-- Formats with 15, 16 and 17 significant digits: 17 always read back as the same double, fewer often do.
local SIGNIFICANT = { '%.15g', '%.16g', '%.17g' }

-- A number as plain decimal text that reads back as the very same double: tostring keeps 14 significant
-- digits only and, like %g, writes small and large numbers with an exponent (1e-05, 1e+15).
local function decimal_text(n)
  local text
  for i = 1, 3 do
    text = string.format(SIGNIFICANT[i], n)
    if tonumber(text) == n then
      break
    end
  end
  if not string.find(text, 'e', 1, true) then
    return text
  end
  local sign, lead, rest, exponent = string.match(text, '^(%-?)(%d)%.?(%d*)e([%+%-]%d+)$')
  -- %g uses an exponent only below 1e-4 or from 1e15 up: the point lies left of the digits or right of them
  local significant, point = lead .. rest, tonumber(exponent) + 1
  if point <= 0 then
    return sign .. '0.' .. string.rep('0', -point) .. significant
  end
  return sign .. significant .. string.rep('0', point - #significant)
end

-- The texts decimal_text made in this script call, by number: a claim writes the same back-off into every meta.
local decimal_texts = {}

local function decimal(n)
  local text = decimal_texts[n]
  if not text then
    text = decimal_text(n)
    if n == n then -- NaN is no table key
      decimal_texts[n] = text
    end
  end
  return text
end

-- One format for the line but its last error, joined after it: a claim encodes a meta for every job it leases,
-- and string.format's %s would cut an error at a NUL byte.
local function meta_encode(m)
  return string.format('%s|%d|%d|%d|%d|%s|%d|%s|%d|%s|', m.state, m.attempts, m.max, m.ttr, m.due, m.token, m.bi,
                       decimal(m.bm), m.bx, decimal(m.bj)) .. m.err
end

-- Most policies a bucket numbers; jobs added with yet more distinct policies get their meta at add.
local MAX_POLICIES = 1000

-- Reads the head of a pool entry without copying its payload: its policy number ('' when the job has meta
-- of its own), its add token ('' when it has none), the position of the '|' before its headers and payload,
-- and the length of its headers block (0 when it has none). Returns nil for an entry that has no '|'.
local function entry_head(entry)
  local bar = entry and string.find(entry, '|', 1, true)
  if not bar then
    return nil
  end
  local number, token, headers_length = string.match(string.sub(entry, 1, bar - 1), '^([^:]*):?([^:]*):?(%d*)$')
  if not number then
    return nil
  end
  return number, token, bar, tonumber(headers_length) or 0
end

-- Joins the parts of a pool entry, as entry_split returns them, into the entry.
local function entry_join(number, token, headers, payload)
  local head = number
  if token ~= '' or headers ~= '' then
    head = head .. ':' .. token
  end
  if headers ~= '' then
    head = head .. ':' .. #headers
  end
  return head .. '|' .. headers .. payload
end

-- The number of `policy` in the bucket's policies hash, numbering it when new; '' when the bucket
-- already numbers MAX_POLICIES policies. `known` caches the answers of one script call.
local function policy_number(policies_key, policy, known)
  local number = known[policy]
  if number then
    return number
  end
  number = redis.call('HGET', policies_key, '=' .. policy)
  if not number then
    local count = redis.call('HLEN', policies_key) / 2
    if count >= MAX_POLICIES then
      number = ''
    else
      number = int(count + 1)
      redis.call('HSET', policies_key, number, policy, '=' .. policy, number)
    end
  end
  known[policy] = number
  return number
end

-- The policy lines policy_meta read in this script call, each as a meta of its fields (false when unreadable):
-- a claim reads the same line for every job added with one policy.
local read_policies = {}

-- The meta of a job not yet claimed, added with policy `line`; nil when the line cannot be read.
local function policy_meta(line, state, due)
  local p = read_policies[line]
  if p == nil then
    local t, x, bi, bm, bx, bj = string.match(line, '^(%d+)|(%d+)|(%d+)|' .. DECIMAL .. '|(%d+)|' .. DECIMAL .. '$')
    p = { max = exact(x), ttr = exact(t), bi = exact(bi), bm = exact(bm), bx = exact(bx), bj = exact(bj) }
    if not (p.max and p.ttr and p.bi and p.bm and p.bx and p.bj) then
      p = false
    end
    read_policies[line] = p
  end
  if not p then
    return nil
  end
  return { state = state, attempts = 0, max = p.max, ttr = p.ttr, due = due, token = '', bi = p.bi, bm = p.bm,
           bx = p.bx, bj = p.bj, err = '' }
end

-- Tells this bucket's consumers that the ready set has work (one marker, whatever the count).
local function signal_ready(signal_key)
  redis.call('ZADD', signal_key, '0', 'ready')
end

-- Tells this topic's pollers (in every instance) that bucket `bucket` has a new earliest due time.
local function wake_pollers(channel, bucket)
  redis.call('PUBLISH', channel, bucket)
end

-- Tells whom a batch of new jobs concerns: consumers when some are ready, and pollers when the earliest
-- delayed job changed from `head` to `new_head`.
local function announce_new_jobs(signal_key, any_ready, head, new_head, channel, bucket)
  if any_ready then
    signal_ready(signal_key)
  end
  if new_head ~= head then
    wake_pollers(channel, bucket)
  end
end

local function earliest(zset_key)
  local head = redis.call('ZRANGE', zset_key, '0', '0', 'WITHSCORES')
  if head[2] then
    return tonumber(head[2])
  end
  return -1
end

-- Removes a job from whichever index its state puts it in.
local function unindex(keys_by_state, id, state)
  local key = keys_by_state[state]
  if key then
    redis.call('ZREM', key, id)
  end
end


-- add: puts new jobs into their bucket, each delayed or (when already due) ready: one job, or a batch
-- that pays for the clock read, the poller wake-up and the consumer signal once.
--
-- KEYS[1] jobs      hash  id -> meta (written here only for a job whose policy gets no number)
-- KEYS[2] payloads  hash  id -> policy number:add token[:headers length]|[headers]payload
-- KEYS[3] delayed   zset  id by due time
-- KEYS[4] ready     zset  id by due time
-- KEYS[5] reserved  zset  id by lease deadline
-- KEYS[6] dead      zset  id by time of death
-- KEYS[7] signal    zset  consumer wake-up marker
-- KEYS[8] policies  hash  the bucket's numbered policies
-- ARGV[1] poller wake-up channel   ARGV[2] this bucket's index
-- then 8 arguments per job:
--   id, payload, delay in ms from the Redis clock's now (or '' when a due time follows),
--   due time in epoch ms taken as given (or ''), its policy line (as `policies` holds it, see common.lua),
--   'REJECT' or 'REPLACE' for an existing id,
--   the add token: random characters (no ':' or '|') the producer sends again when it retries this add,
--   and the job's headers block ('' for none)
--
-- Returns { now ms, code, due ms, code, due ms, ... } with one code per job: 1 added, 2 replaced an
-- existing job, 0 rejected (the id exists). An add whose job already carries its token was delivered
-- before (a client re-sent it after a reconnect, or the producer retried it): it changes nothing and
-- answers as the first delivery did, 1 (or 2 for 'REPLACE'), with a due time of -1.

local jobs, payloads, delayed, ready, reserved, dead, signal, policies =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local now = now_ms()
local head = earliest(delayed)
local new_head = head
local any_ready = false
local known_policies = {}
local reply = { now }

-- Whether `entry` was written by an earlier delivery of the add carrying `token`.
local function written_by(entry, token)
  if not entry or token == '' then
    return false -- an entry from before add tokens has none, and matches no add
  end
  local _, entry_token = entry_head(entry)
  return entry_token == token
end

-- each job's policy number first, before any job is written: a line a job's meta will be read from (its policy
-- gets no number) must be readable, and a script stopped by an error halfway would keep what it wrote
local numbers = {}
for first = 3, #ARGV, 8 do
  local number = policy_number(policies, ARGV[first + 4], known_policies)
  if number == '' and not policy_meta(ARGV[first + 4], 'D', 0) then
    return redis.error_reply('ERR unreadable policy line of job ' .. ARGV[first] .. ': ' .. ARGV[first + 4])
  end
  numbers[first] = number
end

for first = 3, #ARGV, 8 do
  local id = ARGV[first]
  local due
  if ARGV[first + 3] ~= '' then
    due = tonumber(ARGV[first + 3])
  else
    due = now + tonumber(ARGV[first + 2])
  end
  local state = 'D'
  if due <= now then
    state = 'R'
  end
  local policy = ARGV[first + 4]
  local number = numbers[first]
  local token = ARGV[first + 6]
  local entry = entry_join(number, token, ARGV[first + 7], ARGV[first + 1])

  local code = 1
  local delivered_before = false
  if ARGV[first + 5] == 'REPLACE' then
    local old_entry = redis.call('HGET', payloads, id)
    local old_meta = redis.call('HGET', jobs, id)
    if written_by(old_entry, token) then
      code = 2
      delivered_before = true -- replacing again would take the job back from a consumer already running it
    elseif old_entry or old_meta then
      redis.call('HSET', payloads, id, entry)
      code = 2
      local old = meta_decode(old_meta)
      if old then
        unindex({ D = delayed, R = ready, L = reserved, X = dead }, id, old.state)
      else
        for _, key in ipairs({ delayed, ready, reserved, dead }) do
          redis.call('ZREM', key, id)
        end
      end
      if old_meta then
        redis.call('HDEL', jobs, id)
      end
    else
      redis.call('HSET', payloads, id, entry)
    end
  elseif redis.call('HEXISTS', jobs, id) == 1 or redis.call('HSETNX', payloads, id, entry) == 0 then
    if written_by(redis.call('HGET', payloads, id), token) then
      delivered_before = true
    else
      code = 0 -- a job with meta but no payload (only corrupt data has that) still counts as existing
    end
  end

  if delivered_before then
    reply[#reply + 1] = code
    reply[#reply + 1] = -1
  elseif code ~= 0 then
    if number == '' then
      redis.call('HSET', jobs, id, meta_encode(policy_meta(policy, state, due)))
    end
    if state == 'R' then
      redis.call('ZADD', ready, int(due), id)
      any_ready = true
    else
      redis.call('ZADD', delayed, int(due), id)
      if new_head < 0 or due < new_head then
        new_head = due
      end
    end
    reply[#reply + 1] = code
    reply[#reply + 1] = due
  else
    reply[#reply + 1] = 0
    reply[#reply + 1] = -1
  end
end

announce_new_jobs(signal, any_ready, head, new_head, ARGV[1], ARGV[2])
return reply
