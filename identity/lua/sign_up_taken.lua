--[[
  A taken name a network was told of by a self-service key's refused displayName (sign-up
  counts its own in sign_up.lua): counted in the zset sign_up_caps.lua reads, so a network
  learns of a bounded number of names in a window.

  Input:
    KEYS[1] signup:taken:<network>    zset of taken names this network was told of
    ARGV[1] window, ms
    ARGV[2] a random member

  Output: 1
]]
local now = now_ms()
redis.call('ZADD', KEYS[1], now, ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
