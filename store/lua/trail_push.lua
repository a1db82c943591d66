--[[
  TRAIL-PUSH: append a line to a bounded trail (the operators' audit trail, the sign-ins) and
  count it. Allowed at `maxmemory`: the trail never grows past its bound, and an action that
  took effect there (a job cancelled while the operator sheds work) must not be left
  without its entry.

  Input:
    KEYS[1] <trail>         list, newest first
    KEYS[2] <trail>:count   how many lines were ever pushed

    ARGV[1] the line
    ARGV[2] how many lines the trail keeps

  Output:
    the count after this line
]]
redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]) - 1)
return redis.call('INCR', KEYS[2])
