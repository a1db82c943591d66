--[[
  A test script: one read (declared read-only).

  Input:
    KEYS[1] the key to read

  Output:
    its value, or false
]]
return redis.call('GET', KEYS[1])
