-- export: reads jobs whole, without changing them, for a move into their bucket of a new bucket count of
-- the topic (DelayQueue.migrateBuckets): import then writes each into its new bucket, another hash slot,
-- and forget removes it from this one.
--
-- KEYS[1] jobs   KEYS[2] payloads   KEYS[3] delayed   KEYS[4] ready   KEYS[5] reserved   KEYS[6] dead
-- KEYS[7] policies
-- ARGV    ids
--
-- Returns one item per id: {} when this bucket holds nothing of the job, else
-- { pool entry, meta, index name, score, policy, fingerprint } where every value is '' when missing, the
-- policy is the line of a job waiting for its first claim (its entry's number means nothing in another
-- bucket; the entry of one whose number is unknown here comes without it), and the fingerprint changes
-- whenever the job does.

local jobs, payloads, policies = KEYS[1], KEYS[2], KEYS[7]
local indexes = indexes_by_name(KEYS[3], KEYS[4], KEYS[5], KEYS[6])
local known_policies = {}
local reply = {}
for i, id in ipairs(ARGV) do
  local entry, meta, index, score, fingerprint = whole_job(jobs, payloads, indexes, id)
  if entry then
    local policy = ''
    if meta == '' and (index == 'delayed' or index == 'ready') then
      local number, payload, token, headers = entry_split(entry)
      local line = number and number ~= '' and policy_line(policies, number, known_policies)
      if line and policy_meta(line, 'D', 0) then
        policy = line
      elseif number then
        -- an unknown number could name another policy in the new bucket: moved without one, the job stays
        -- as unreadable as it is here
        entry = entry_join('', token, headers, payload)
      end
    end
    reply[i] = { entry, meta, index, score, policy, fingerprint }
  else
    reply[i] = {}
  end
end
return reply
