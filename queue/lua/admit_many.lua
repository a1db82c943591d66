--[[
  ADMIT_MANY: several admissions in one call (group commit, horst_queue's `CallGroup`): the
  admissions that arrived while one was in flight. Each is admit.lua itself, run as the
  function `one(keys, argv)` (horst_store's `Script::group_of`, the prelude's run_group)
  with its own slice of KEYS and ARGV, one after another in this one atomic step, exactly
  as if each had been its own call in that order: each reads what the ones before it wrote
  (queue:fair, the lanes, the day's counts, the idle slots). What is paid once for all of
  them is the call: EVALSHA's dispatch, the prelude and helpers made, and the replicas'
  WAIT after it (Writes::Durable).

  Input:
    KEYS[1] to KEYS[16]   the first admission's KEYS, as admit.lua's KEYS[1] to KEYS[16];
                          then the second admission's 16, and so on (all in the queue
                          group's hash slot, as admit.lua's)
    ARGV[1] to ARGV[35]   the first admission's ARGV, as admit.lua's ARGV[1] to ARGV[35];
                          then the second admission's 35, and so on

  Output:
    one reply per admission, in their order: admit.lua's reply, or {'error', message} when
    its run raised an error (a refused write, as at maxmemory: the message is Redis's, so
    the caller tells an outage from a bug as for a call of its own). An error ends only
    that admission: what it wrote before the error stays, as it would after a call of its
    own that failed there, and its caller is answered with the error (and drops its job if
    it was queued, Queue::drop_unclear); the others go on.
]]
return run_group(one, 16, 35)
