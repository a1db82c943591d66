--[[
  CLAIM: the next turn of the claiming slot's lanes (the head that has waited longest), with
  a lease and a fencing token (the claim's time: a job is claimed once), in one step: the reservation becomes a charge. A head job
  that can no longer finish within its caller's wait is failed with `timeout` instead (its
  reservation released), one whose caller's API process is gone (its presence expired) is
  dropped as `cancelled` (released), as the orphan sweep would, and one no longer queued is
  taken off the lane; then the next head is looked at.

  Input:
    KEYS[1] queue:lane:<lane>       the lanes the slot's pool claims from (waiting ids by
    KEYS[2] queue:lane:<lane>       turn, head = lowest; a referee slot: the referee lane
                                    twice)
    KEYS[3] queue:fair              the lanes' turns and the accounts' waiting counts
                                    (keys.rs): the claim moves the lane's round and takes
                                    the job off its account's count
    KEYS[4] queue:running           zset of running job ids by lease expiry
    KEYS[5] queue:handoff:<pool>    the pool's idle slots (admit.lua): the claiming slot
                                    leaves it (with ARGV[6] '1')
    KEYS[6] the queue group's base  the prefix (and hash tag) of every queue key; never
                                    touched itself: the head job's keys are named from it
                                    (group_key): job:<id>, budget:<day>,
                                    idem:<account>:<idem>, callers:<process>, and its
                                    channel done:<id>

    ARGV[1] the claiming slot's id (the job's worker)
    ARGV[2] lease, ms
    ARGV[3] job ttl, s
    ARGV[4] the claiming slot's pool ('general' or 'referee')
    ARGV[5] how many heads may be taken off without running before the script gives up
    ARGV[6] '1' when the claiming slot is registered idle (it woke by itself), else ''
    ARGV[7] how long after a job's admission its waiter's presence lives at the least, ms
            (admission refreshed it, or it was refreshed a little before): the presence of
            a younger job's waiter is not looked at
    ARGV[8] with ARGV[6] '1': '' or the newest claim token the slot was handed ('0': none). A
            registered slot that is no longer among the idle slots was taken off by an
            admission, which may have handed it a job (admit.lua) whose wake-up it has not
            heard: that job (newer than this token) is answered first, as claimed_by.lua
            would, and no other is claimed

  Output:
    {'claimed', token, values, more}  claimed (values: the record's CLAIM_FIELDS
                                 (helpers.lua) as it was read, in that order, nil for a
                                 missing one; the claim wrote state 'running', started and
                                 token = token, worker = ARGV[1], charged = the
                                 reservation; more: 1 if another job waits in the slot's
                                 lanes, else 0)
    {'skipped'}                  ARGV[5] heads were taken off without running: call again
    {'empty'}                    the lanes are empty

  Cluster note: which job is next is known only from the lane, and the head job's record
  names its other keys; they are all queue keys, named from KEYS[6] in its hash slot
  (group_key), so the look and the claim are one step and no two slots race for one head.
]]
if ARGV[6] == '1' and ARGV[8] ~= '' and not redis.call('ZSCORE', KEYS[5], ARGV[1]) then
  local held = held_claim(4, 6, ARGV[1], ARGV[8])
  if held then return held end
end
return (claim_next(1, 2, 3, 4, 5, 6, nil, now_ms(), ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5],
  ARGV[6], ARGV[7]))
