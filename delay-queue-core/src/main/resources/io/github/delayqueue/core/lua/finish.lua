-- finish: removes jobs their consumer completed, each only if that consumer still holds its lease (a claim
-- can carry the same finish ahead of its own work, see claim.lua).
--
-- KEYS[1] jobs   KEYS[2] payloads   KEYS[3] reserved
-- ARGV    id, lease token, id, lease token, ...
--
-- Returns one code per job: 1 finished, 0 no such job (or meta unreadable), -1 stale lease (the job was taken
-- back or is held by another claim). A lease is checked by its meta's state and token only: a leased job whose
-- meta cannot be read past its token is finished by the holder of that token.

return finish_leased(KEYS[1], KEYS[2], KEYS[3], 1)
