--[[
  CLAIMED-BY: the job running under a slot's claim that the slot does not know it holds: a
  claim (claim.lua, or complete.lua's claim of the next job) that Redis ran after the slot
  stopped waiting for its answer (a stall longer than the call's timeout, a connection cut
  after the script ran). Without this the job would sit until its lease ran out and then
  fail as a dead worker's does (reap.lua), though its worker lives.

  Input:
    KEYS[1] queue:running           zset of running job ids by lease expiry
    KEYS[2] the queue group's base  the running jobs' records are named from it
                                    (group_key, as in claim.lua)

    ARGV[1] the slot's id (the claimed job's `worker`)
    ARGV[2] the newest claim token the slot was handed ('0': none): only a claim that new
            or newer is returned. A job the slot gave up recording still runs under its
            name until it is reaped, and must not be run again as a lost claim (a token is
            the claim's time, and the slot claims one job at a time, so a lost claim is the
            newest)
    ARGV[3..] the ids of the jobs the slot knows it holds (one whose completion is still
            being retried, one it gave up recording) or was handed with that newest token:
            not returned. A lost claim of the same millisecond as the slot's newest one (a
            trivial job's completion claims the next within it) has the same token, and is
            told from the known ones by its id

  Output:
    {'claimed', token, values, 0}   the job's CLAIM_FIELDS (helpers.lua) and then its
                                    started, worker and charged, their values in that
                                    order (claim.lua's reply, with what its claim wrote)
    {'empty'}                       the slot holds no other job

  A job an admission handed to the slot (admit.lua) is taken up by the answer (its `handed`
  mark deleted): from then on it is the slot's, as any claimed job.

  Cluster note: which jobs run is known from queue:running; their records are queue keys
  named from KEYS[2] in its hash slot, so the look is one step on one shard.
]]
local known = {}
for i = 3, #ARGV do known[ARGV[i]] = true end
return held_claim(1, 2, ARGV[1], ARGV[2], known) or {'empty'}
