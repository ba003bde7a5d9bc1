-- Shared by every script: DelayQueueScripts puts the declarations each script uses before it (CommonPrelude).
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
  clock_us = t[1] * 1000000 + t[2] -- arithmetic reads the digits as tonumber would, without a call to it
  return (clock_us - clock_us % 1000) / 1000
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

-- The lease token in the meta of a leased job, read no further than the token: nil for a job in another state
-- and for meta that cannot be read that far.
local function lease_token(raw)
  return raw and string.match(raw, '^L|%d+|%d+|%d+|%-?%d+|(%d*)|')
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
  local number, token, headers_length, after_bar
  -- a plain search for the '|' first: the pattern would backtrack through a whole entry that has none, in time
  -- that grows with the square of its length
  if entry and string.find(entry, '|', 1, true) then
    number, token, headers_length, after_bar = string.match(entry, '^([^:|]*):?([^:|]*):?(%d*)|()')
  end
  if not number then
    return nil
  end
  return number, token, after_bar - 1, headers_length == '' and 0 or tonumber(headers_length)
end

-- Splits a pool entry into its policy number ('' when the job has meta of its own), its payload, its
-- add token ('' when it has none) and its headers block ('' when it has none). Returns nil for an entry that
-- has no '|'.
local function entry_split(entry)
  local number, token, bar, headers_length = entry_head(entry)
  if not number then
    return nil
  end
  local headers = ''
  if headers_length > 0 then
    headers = string.sub(entry, bar + 1, bar + headers_length)
  end
  return number, string.sub(entry, bar + 1 + headers_length), token, headers
end

-- The headers block of a pool entry: '' when the job has none or the entry cannot be read.
local function entry_headers(entry)
  local number, _, bar, headers_length = entry_head(entry)
  if not number or headers_length == 0 then
    return ''
  end
  return string.sub(entry, bar + 1, bar + headers_length)
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

-- The policy line numbered `number` in the bucket's policies hash; nil when the number is unknown.
-- `known` caches policy lines read by one script call.
local function policy_line(policies_key, number, known)
  local line = known[number]
  if not line then
    line = redis.call('HGET', policies_key, number)
    if not line then
      return nil
    end
    known[number] = line
  end
  return line
end

-- The meta of a job waiting for its first claim, from its numbered policy; nil when the number is unknown.
-- `known` caches policy lines read by one script call.
local function first_meta(policies_key, number, state, due, known)
  local line = policy_line(policies_key, number, known)
  return line and policy_meta(line, state, due)
end

-- Finishes jobs their consumer completed, each only if that consumer still holds its lease: ARGV from `first`
-- on holds id, lease token, id, lease token, ... The batch is read with one command and removed with one
-- command per key. Returns one code per job: 1 finished, 0 no such job (or meta unreadable), -1 stale lease
-- (the job was taken back or is held by another claim). A lease is checked by its meta's state and token
-- only: a leased job whose meta cannot be read past its token is finished by the holder of that token.
local function finish_leased(jobs_key, payloads_key, reserved_key, first)
  local ids = {}
  for i = first, #ARGV, 2 do
    ids[#ids + 1] = ARGV[i]
  end
  if #ids == 0 then
    return {}
  end
  local metas = redis.call('HMGET', jobs_key, unpack(ids))
  local codes, done, seen = {}, {}, {}
  for i = 1, #ids do -- not ipairs, which calls a C function for every element
    local id = ids[i]
    local code = 0
    local token = lease_token(metas[i])
    if token then
      code = -1
      if token == ARGV[first + 2 * i - 1] and not seen[id] then
        code = 1
        seen[id] = true
        done[#done + 1] = id
      end
    elseif meta_decode(metas[i]) then
      code = -1 -- in another state
    end
    codes[i] = code
  end
  if #done > 0 then
    redis.call('ZREM', reserved_key, unpack(done))
    redis.call('HDEL', jobs_key, unpack(done))
    redis.call('HDEL', payloads_key, unpack(done))
  end
  return codes
end

-- The state of a job without meta: the index holding it, and its score there; nil when in neither.
local function pending_state(delayed_key, ready_key, id)
  local due = redis.call('ZSCORE', delayed_key, id)
  if due then
    return 'D', tonumber(due)
  end
  due = redis.call('ZSCORE', ready_key, id)
  if due then
    return 'R', tonumber(due)
  end
  return nil
end

-- Exponential back-off after `attempts` failed attempts, shortened by up to `bj` (0..1) of itself
-- using the caller's random fraction, so retries of a burst of failures spread out. Always a number from
-- 0 to the cap `bx`: the growth overflows a double after enough attempts, to inf (capped) or, times a zero
-- start, to NaN, which no comparison catches and no sorted set takes as a score.
local function backoff_ms(m, random_fraction)
  local delay = 0
  if m.bi > 0 then
    delay = m.bi * (m.bm ^ (m.attempts - 1))
  end
  if not (delay <= m.bx) then
    delay = m.bx
  end
  return math.floor(delay * (1 - m.bj * random_fraction))
end

-- Says what is wrong with an id met in an index (`where`) whose pool entry `raw` could not be read.
local function corrupt_reason(where, raw)
  if not raw then
    return where .. ' without a pool entry'
  end
  return where .. ' with unreadable meta: ' .. raw
end

-- Moves a job whose meta could not be read to the dead set, keeping the raw meta in the reason.
local function bury_corrupt(jobs_key, dead_key, id, reason, now)
  local m = { state = 'X', attempts = 0, max = 1, ttr = 1, due = now, token = '', bi = 0, bm = 1, bx = 0, bj = 0,
              err = 'corrupt: ' .. reason }
  redis.call('HSET', jobs_key, id, meta_encode(m))
  redis.call('ZADD', dead_key, int(now), id)
end

-- Sends a held job that failed or whose lease expired on: back to delayed after its back-off while
-- attempts remain, else to dead. Everything is worked out before the first write, and the index taking the
-- job is written first and reserved last: a write Redis refuses leaves the job held, never in no state.
-- Returns 1 and the retry due time, or 2 and the time of death.
local function retry_or_bury(jobs_key, delayed_key, reserved_key, dead_key, id, m, err, retryable,
                             random_fraction, now)
  m.token = ''
  m.err = err
  local code, index_key, score = 2, dead_key, now
  if retryable and m.attempts < m.max then
    m.state = 'D'
    m.due = now + backoff_ms(m, random_fraction)
    code, index_key, score = 1, delayed_key, m.due
  else
    m.state = 'X'
  end
  local meta = meta_encode(m)
  redis.call('ZADD', index_key, int(score), id)
  redis.call('HSET', jobs_key, id, meta)
  redis.call('ZREM', reserved_key, id)
  return code, score
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

-- Reads the meta of a job the caller claims to hold with lease token `token`. Returns the meta, or nil
-- and 0 when there is no such job, or nil and -1 when the lease is stale (the job was taken back,
-- cancelled, replaced or claimed again).
local function held_meta(jobs_key, id, token)
  local m = meta_decode(redis.call('HGET', jobs_key, id))
  if not m then
    return nil, 0
  end
  if m.state ~= 'L' or m.token ~= token then
    return nil, -1
  end
  return m
end

-- The reply of a batch move: { moved, next time of the source set (ms) or -1, now (us), more, corrupt ids... }
local function batch_reply(moved, source_key, batch_was_full, corrupt)
  local more = 0
  if batch_was_full then
    more = 1
  end
  local reply = { moved, earliest(source_key), clock_us, more }
  for _, id in ipairs(corrupt) do
    reply[#reply + 1] = id
  end
  return reply
end

-- Removes a job from whichever index its state puts it in.
local function unindex(keys_by_state, id, state)
  local key = keys_by_state[state]
  if key then
    redis.call('ZREM', key, id)
  end
end

-- The indexes of a bucket by the names moves between buckets use for them.
local function indexes_by_name(delayed_key, ready_key, reserved_key, dead_key)
  return { delayed = delayed_key, ready = ready_key, reserved = reserved_key, dead = dead_key }
end

-- Reads all a bucket holds of job `id`, for a move to another bucket: its pool entry, its meta, the name
-- of the first index holding it and its score there ('' for each one missing), and a fingerprint of them
-- all that changes whenever one of them does. Returns nil when the bucket holds nothing of the job.
local function whole_job(jobs_key, payloads_key, indexes, id)
  local entry = redis.call('HGET', payloads_key, id) or ''
  local meta = redis.call('HGET', jobs_key, id) or ''
  local index, score = '', ''
  for _, name in ipairs({ 'delayed', 'ready', 'reserved', 'dead' }) do
    local found = redis.call('ZSCORE', indexes[name], id)
    if found then
      index, score = name, found
      break
    end
  end
  if entry == '' and meta == '' and index == '' then
    return nil
  end
  return entry, meta, index, score, redis.sha1hex(table.concat({ entry, meta, index, score }, '\n'))
end
