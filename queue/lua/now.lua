--[[
  NOW: the server clock with the test offset, so every process agrees on time.

  Input: none (the registry appends the clock offset, which the prelude takes off)

  Output:
    now, ms since the Unix epoch
]]
return now_ms()
