--[[
  NOW: the server clock with the test offset, so every process agrees on time.

  Input:
    ARGV[1] clock offset, ms

  Output:
    now, ms since the Unix epoch
]]
return now_ms()
