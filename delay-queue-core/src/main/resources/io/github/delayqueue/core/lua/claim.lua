-- claim: leases up to ARGV[1] jobs to one consumer: ready jobs first, oldest due first, then delayed jobs that
-- have fallen due, straight from the delayed set (a consumer waiting as a job falls due claims it without
-- its being made ready first: one script call, no wake-up). Each claimed job gets attempts + 1, a fresh lease
-- token and a lease deadline of now + its TTR; a job claimed for the first time gets its meta here. The
-- batch is read and written with one command each.
--
-- KEYS[1] jobs   KEYS[2] payloads   KEYS[3] ready   KEYS[4] reserved   KEYS[5] dead
-- KEYS[6] signal   KEYS[7] lease token sequence (string, INCRBY)   KEYS[8] policies   KEYS[9] delayed
-- KEYS[10] control (hash): the topic's pause, and this bucket's share of its rate limit with its tokens
-- ARGV[1] most jobs to claim
-- ARGV[2] ttr ms   ARGV[3] max attempts   ARGV[4..7] back-off initial ms, multiplier, max ms, jitter:
--         the consumer's policy, stamped on each claimed job so that its lease, retries and death
--         follow it ('' keeps what the job was added with)
-- ARGV[8] '1' to have the reply say when the next delayed job falls due (a poller claiming as jobs fall due)
-- KEYS[11] schedules (hash, schedule_record.lua)   ARGV[9] poller wake-up channel   ARGV[10] this bucket's index
-- ARGV[11..] id, lease token, ...: jobs of this bucket the consumer completed, finished first as finish.lua
--         does, so that a consumer with a backlog finishes and claims in one call
--
-- Returns one flat table (Redis turns every table of a reply into RESP apart, probing each for seven special
-- fields: the five nested tables this reply was cost a claim of one job some 5,000 instructions):
--   now us, jobs left to claim now, next delayed due ms (-1 when none or not asked),
--   held back: -1 when the topic's controls did not hold the claim back, -2 while the topic is paused (nothing
--     claimed), or the ms until the rate limit lets the next job start (it took fewer than asked),
--   the counts of the four lists that follow: jobs claimed, corrupt ids, schedules to refill, finish codes;
--   then CLAIMED_FIELDS fields per job claimed:
--     id, payload, attempts, max attempts, due ms, lease token, lease deadline ms, ttr ms, headers block or '';
--   the corrupt ids: met with unreadable meta or no payload (moved to dead) or another state (dropped);
--   the schedules to refill; the finish codes, one per job of ARGV[11..], as finish.lua returns them.
-- The jobs left count the ready ones and the due delayed ones, and are only counted when the claim took all
-- it asked for (0 otherwise: it took every one there was). A claim held back signals no one: its consumer waits
-- (for a resume's signal, or the next token) rather than wake another consumer to be held back too.
-- A claimed job that is the pending occurrence of a recurring schedule (schedule_record.lua) enqueues the
-- schedule's next occurrence in this same call; schedules to refill lists the ids of those whose fire times
-- to come run low (fewer than SCHEDULE_REFILL_BELOW left), for the Java side to compute more.

local jobs, payloads, ready, reserved, dead, signal, seq, policies, delayed, control, schedules =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11]
local asked = tonumber(ARGV[1])
local most = asked
local now = now_ms()
-- The jobs the consumer completed go first, with a read of their metas of their own: the claim's read of its jobs'
-- metas then meets a jobs hash the finish emptied or left smaller, where a job never claimed has none. Reading both
-- with one HMGET saved a command and cost more (README, "What a claim costs Redis"): a small hash is a listpack,
-- searched entry by entry, and every claimed id was then looked for among the finished jobs' metas.
local finished = finish_leased(jobs, payloads, reserved, 11)

-- The topic's controls, one HMGET: paused claims nothing; a rate limit is a token bucket of `burst` tokens, one
-- more every `refill-us` microseconds (Redis clock), and a claim takes at most the whole tokens it holds.
local paused, burst, refill_us, tokens, at_us =
  unpack(redis.call('HMGET', control, 'paused', 'burst', 'refill-us', 'tokens', 'at-us'))
local held, limited = -1, false
if paused then
  most, held = 0, -2
elseif burst then
  burst, refill_us = tonumber(burst), tonumber(refill_us)
  local elapsed = math.max(0, clock_us - (tonumber(at_us) or clock_us))
  tokens = math.min(burst, (tonumber(tokens) or burst) + elapsed / refill_us)
  if math.floor(tokens) < most then
    most, limited = math.floor(tokens), true
  end
end
-- The consumer's policy as numbers, for the meta of jobs claimed before (stamp); read at the first such job.
local policy

-- Stamps the consumer's policy on the meta `m` of a job it claims: each field it sets replaces the job's own.
local function stamp(m)
  if not policy then
    policy = { ttr = tonumber(ARGV[2]), max = tonumber(ARGV[3]), bi = tonumber(ARGV[4]), bm = tonumber(ARGV[5]),
               bx = tonumber(ARGV[6]), bj = tonumber(ARGV[7]) }
  end
  for field, value in pairs(policy) do
    m[field] = value
  end
  return m
end

local known_policies = {}

-- How this claim leases the jobs never claimed before that were added with policy `first_number`: their max
-- attempts and TTR, and the text of the meta they get in two parts around the due time and lease token that
-- differ from job to job. Worked out for the last policy met, as the jobs of a batch nearly always share one:
-- most jobs are claimed once, and joining two parts per job is far cheaper than building the meta as a table and
-- encoding it for each job. The parts are joined from texts, the policy line's fields with the consumer's
-- (ARGV[2..7]) over them, written as meta_encode writes them: reading every field as a number and writing it again,
-- with the tables that takes, cost a claim of one job about an eighth of its instructions (README, "What a claim's
-- instructions go to").
local first_number, first_max, first_ttr, first_head, first_tail

-- A policy line's fields: TTR, max attempts, back-off initial, multiplier, max and jitter (common.lua).
local POLICY_LINE = '^(%d+)|(%d+)|(%d+)|' .. DECIMAL .. '|(%d+)|' .. DECIMAL .. '$'

-- Whether a whole number's text reads as an exact number, as exact() would say, without reading it when it has
-- fewer than 16 digits (all of which are below 2^53).
local function exact_digits(text)
  return #text < 16 or exact(text) ~= nil
end

-- The text decimal() writes, which meta holds, for a back-off multiplier or jitter as Java writes it into a policy
-- line or a consumer's policy (BigDecimal's plain string of a double: its digits, with '.0' after a whole number, and
-- a zero after the digits of one Java prints with an exponent, 0.00050 for 5.0E-4). Those zeros are cut, and the
-- '.' they leave; a text with an exponent, as an earlier version wrote, is read and written again. Plain comparisons
-- first, a pattern only for the zeros: this runs for every claim of one job.
local function plain_decimal(text)
  if text == '0.0' then
    return '0'
  elseif string.find(text, 'E', 1, true) or string.find(text, 'e', 1, true) then
    return decimal(tonumber(text))
  elseif string.byte(text, -1) == 48 and string.find(text, '.', 1, true) then -- a '0' after the point
    return (string.gsub(string.gsub(text, '0+$', ''), '%.$', ''))
  end
  return text
end

-- The consumer's field `i` of ARGV (2 TTR .. 7 back-off jitter) when it sets one, else the job's own `text`.
local function stamped(i, text)
  local own = ARGV[i]
  if own ~= '' then
    return own
  end
  return text
end

-- Works out the first claim of the jobs added with policy `number` (above); false when the bucket's policies
-- do not hold that number, or hold a line that cannot be read (as policy_meta in common.lua reads it).
local function first_claim_of(number)
  if number ~= first_number then
    local line = policy_line(policies, number, known_policies)
    local ttr, max, bi, bm, bx, bj
    if line then
      ttr, max, bi, bm, bx, bj = string.match(line, POLICY_LINE)
    end
    if not (ttr and exact_digits(ttr) and exact_digits(max) and exact_digits(bi) and exact(bm)
        and exact_digits(bx) and exact(bj)) then
      return false
    end
    ttr, max = stamped(2, ttr), stamped(3, max)
    first_number, first_max, first_ttr = number, tonumber(max), tonumber(ttr)
    first_head = 'L|1|' .. max .. '|' .. ttr .. '|'
    first_tail = '|' .. stamped(4, bi) .. '|' .. plain_decimal(stamped(5, bm)) .. '|' .. stamped(6, bx) .. '|'
      .. plain_decimal(stamped(7, bj)) .. '|'
  end
  return true
end

-- What claimable returns for a job never claimed before, in place of its meta.
local FIRST_CLAIM = 'first claim'

local INDEX_NAMES = { R = 'in ready', D = 'in delayed' }

local function unreadable_entry_reason(where, entry)
  return where .. ' with an unreadable pool entry: ' .. string.sub(entry, 1, 100)
end

-- What claiming a job from the index whose state is `state` ('R' ready, 'D' delayed) starts from, with its
-- payload and headers block: the job's meta decoded when it was claimed before, else FIRST_CLAIM with the first
-- claim of its policy worked out (first_claim_of); or nil and why it cannot be claimed: 'stale' (its meta names
-- another state) or the reason it is corrupt.
local function claimable(raw, entry, state)
  local where = INDEX_NAMES[state]
  local number, body, _, headers = entry_split(entry)
  if raw then
    local m = meta_decode(raw)
    if not m then
      return nil, corrupt_reason(where, raw)
    elseif m.state ~= state then
      return nil, 'stale'
    elseif not entry then
      return nil, where .. ' without a payload'
    elseif not body then
      return nil, unreadable_entry_reason(where, entry)
    end
    return m, body, headers
  end
  if not entry then
    return nil, corrupt_reason(where, nil)
  elseif not number or number == '' then
    return nil, unreadable_entry_reason(where, entry)
  end
  if not first_claim_of(number) then
    return nil, where .. ' with an unknown policy number: ' .. number
  end
  return FIRST_CLAIM, body, headers
end

-- ready jobs first, then due delayed ones: ids, their scores and the state each index stands for
local popped = redis.call('ZPOPMIN', ready, (most == asked) and ARGV[1] or int(most))
local ids, scores, states = {}, {}, {}
for i = 1, #popped, 2 do
  ids[#ids + 1] = popped[i]
  scores[#scores + 1] = tonumber(popped[i + 1])
  states[#states + 1] = 'R'
end
-- A poller's claim of a few jobs reads the delayed set one job further than it wants: the first job it leaves
-- is the next to fall due, which the poller asks for (next_delayed: its due time, -1 when none is left; nil when
-- not read so, and the head is read at the end). A larger claim reads only the due jobs, as a consumer's does.
-- The poller's claim reads the lowest FIRST_READ + 1 jobs first, and the rest it may take (and the one after
-- them) only when all of those are due: a poller claims as jobs fall due, most often one or two, and Redis writes
-- the score of every job read as text (a ZRANGE of 33 jobs WITHSCORES cost Redis 7.0 6.4 us, of 3 jobs 0.74 us:
-- README, "What a claim costs Redis").
local NEXT_DUE_READ_AHEAD, FIRST_READ = 32, 2
local next_delayed
if #ids < most then
  local want = most - #ids
  local read_ahead = ARGV[8] == '1' and want <= NEXT_DUE_READ_AHEAD
  local lowest
  if read_ahead then
    lowest = redis.call('ZRANGE', delayed, '0', int(math.min(want, FIRST_READ)), 'WITHSCORES')
    if want > FIRST_READ and #lowest == 2 * (FIRST_READ + 1) and tonumber(lowest[#lowest]) <= now then
      local rest = redis.call('ZRANGE', delayed, int(FIRST_READ + 1), int(want), 'WITHSCORES')
      for i = 1, #rest do
        lowest[#lowest + 1] = rest[i]
      end
    end
  else
    lowest = redis.call('ZRANGEBYSCORE', delayed, '-inf', int(now), 'WITHSCORES', 'LIMIT', '0', int(want))
  end
  local taken = 0
  for i = 1, math.min(#lowest, 2 * want), 2 do
    local due = tonumber(lowest[i + 1])
    if due > now then
      break
    end
    taken = taken + 1
    ids[#ids + 1] = lowest[i]
    scores[#scores + 1] = due
    states[#states + 1] = 'D'
  end
  if taken > 0 then
    redis.call('ZREMRANGEBYRANK', delayed, '0', int(taken - 1)) -- the due ids are exactly the lowest ranks
  end
  if read_ahead then
    next_delayed = tonumber(lowest[2 * taken + 2]) or -1
  end
end

-- The reply's fields before the claimed jobs' (see the top), and each claimed job's.
local REPLY_HEAD, CLAIMED_FIELDS = 8, 9
-- made with room for the head and one job's fields: a Lua table grows by doubling, rehashing its keys each time, so
-- that a claim of one job would otherwise grow it at nearly every field
local reply = { 0, 0, 0, 0, 0, 0, 0, 0, nil, nil, nil, nil, nil, nil, nil, nil, nil } -- the head filled in at the end
local claimed_count = 0
local corrupt = {}
local left = 0
if #ids > 0 then
  local metas = redis.call('HMGET', jobs, unpack(ids))
  local entries = redis.call('HMGET', payloads, unpack(ids))
  local last_token = redis.call('INCRBY', seq, int(#ids))
  local new_metas, reserved_entries = {}, {}
  local deadline, deadline_text -- of the job before: jobs with one TTR share a lease deadline, written once
  for i = 1, #ids do -- numeric loops here and below: ipairs calls a C function for every element
    local id = ids[i]
    local meta_or_first, body_or_refusal, headers = claimable(metas[i], entries[i], states[i])
    if meta_or_first then
      local token = int(last_token - #ids + i)
      local attempts, max, due, ttr, meta
      if meta_or_first == FIRST_CLAIM then -- claimable worked out first_* for its policy; due at its score
        attempts, max, due, ttr = 1, first_max, scores[i], first_ttr
        meta = first_head .. int(due) .. '|' .. token .. first_tail
      else
        local m = stamp(meta_or_first)
        m.state, m.attempts, m.token = 'L', m.attempts + 1, token
        attempts, max, due, ttr = m.attempts, m.max, m.due, m.ttr
        meta = meta_encode(m)
      end
      if now + ttr ~= deadline then
        deadline = now + ttr
        deadline_text = int(deadline)
      end
      new_metas[#new_metas + 1] = id
      new_metas[#new_metas + 1] = meta
      reserved_entries[#reserved_entries + 1] = deadline_text
      reserved_entries[#reserved_entries + 1] = id
      local body, at = body_or_refusal, REPLY_HEAD + claimed_count * CLAIMED_FIELDS -- the job's fields in the reply
      reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4], reply[at + 5] = id, body, attempts, max, due
      reply[at + 6], reply[at + 7], reply[at + 8], reply[at + 9] = token, deadline, ttr, headers
      claimed_count = claimed_count + 1
    elseif body_or_refusal == 'stale' then
      corrupt[#corrupt + 1] = id -- a stale index entry: the job lives on in the state its meta names
    else
      bury_corrupt(jobs, dead, id, body_or_refusal, now)
      corrupt[#corrupt + 1] = id
    end
  end
  if claimed_count > 0 then
    redis.call('HSET', jobs, unpack(new_metas))
    redis.call('ZADD', reserved, unpack(reserved_entries))
  end
  if #ids == most then -- a claim that took fewer than it asked for took every job there was to claim
    left = redis.call('ZCARD', ready) + redis.call('ZCOUNT', delayed, '-inf', int(now))
  end
  if left > 0 and not limited then
    signal_ready(signal) -- wake the next consumer: work is left
  end
end
if burst and claimed_count > 0 then
  tokens = tokens - claimed_count
  redis.call('HSET', control, 'tokens', decimal(tokens), 'at-us', int(clock_us))
end
if limited and #ids == most then -- it took all it was allowed, and more may be waiting
  if tokens < 1 then
    held = math.max(1, math.ceil((1 - tokens) * refill_us / 1000))
  elseif left > 0 then
    signal_ready(signal) -- corrupt or stale ids took no token: tokens and work are left
  end
end

-- recurring schedules: a claimed pending occurrence enqueues the next one, with a copy of its pool entry
local SCHEDULE_REFILL_BELOW = 16
local refill = {}
for at = REPLY_HEAD + 1, REPLY_HEAD + claimed_count * CLAIMED_FIELDS, CLAIMED_FIELDS do
  local id = reply[at]
  local schedule = schedule_of(id)
  local line = schedule and redis.call('HGET', schedules, 'line:' .. schedule)
  local state, pending, last, times
  if line then
    state, pending, last, times = schedule_line_decode(line)
  end
  if pending == id then
    local item, rest = string.match(times, '^([^,]+),?(.*)$')
    local next_id = ''
    if item then
      next_id = schedule .. '@' .. item
      last = string.match(item, '^%d+')
      local fire = tonumber(last)
      local entry = redis.call('HGET', payloads, id)
      local meta
      if entry_head(entry) == '' then -- the occurrence has meta of its own, as it will now
        meta = meta_decode(redis.call('HGET', jobs, id))
        meta.state, meta.attempts, meta.due, meta.token, meta.err = 'D', 0, fire, '', ''
        meta = meta_encode(meta)
      end
      enqueue_occurrence(payloads, jobs, delayed, next_id, fire, entry, meta, ARGV[9], ARGV[10])
      next_delayed = nil -- the delayed set has a new job: read its head again below
    end
    redis.call('HSET', schedules, 'line:' .. schedule, schedule_line(state, next_id, last, rest or ''))
    local _, left_times = string.gsub(rest or '', '[^,]+', '')
    if left_times < SCHEDULE_REFILL_BELOW then
      refill[#refill + 1] = schedule
    end
  end
end

local next_due = -1
if ARGV[8] == '1' then
  next_due = next_delayed or earliest(delayed)
end
reply[1], reply[2], reply[3], reply[4] = clock_us, left, next_due, held
reply[5], reply[6], reply[7], reply[8] = claimed_count, #corrupt, #refill, #finished
local n = REPLY_HEAD + claimed_count * CLAIMED_FIELDS
for _, list in ipairs({ corrupt, refill, finished }) do
  for i = 1, #list do
    reply[n + i] = list[i]
  end
  n = n + #list
end
return reply
