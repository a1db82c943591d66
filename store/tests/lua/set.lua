--[[
  A test script: one write.

  Input:
    KEYS[1] the key to set

    ARGV[1] its value

  Output:
    1
]]
redis.call('SET', KEYS[1], ARGV[1])
return 1
