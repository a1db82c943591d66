--[[
  COMPLETE_MANY: several completions in one call (group commit, horst_queue's `CallGroup`):
  the completions of this process's slots that arrived while one was in flight. Each is
  complete.lua itself, run as the function `one(keys, argv)` (horst_store's
  `Script::group_of`, the prelude's run_group) with its own slice of KEYS and ARGV, one
  after another in this one atomic step, exactly as if each had been its own call in that
  order: each is fenced on its own, and a slot that claims its next job here claims it
  after the completions before it in the group claimed theirs. What is paid once for all
  of them is the call.

  Input:
    KEYS[1] to KEYS[8]    the first completion's KEYS, as complete.lua's KEYS[1] to KEYS[8];
                          then the second completion's 8, and so on (all in the queue
                          group's hash slot, as complete.lua's)
    ARGV[1] to ARGV[18]   the first completion's ARGV, as complete.lua's ARGV[1] to
                          ARGV[18]; then the second completion's 18, and so on

  Output:
    one reply per completion, in their order: complete.lua's reply, or {'error', message}
    when its run raised or returned an error (the message is Redis's or the script's). An
    error ends only that completion, which its caller is answered with (and retries as
    after a call of its own that failed); the others go on.
]]
return run_group(one, 8, 18)
