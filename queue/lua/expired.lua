--[[
  EXPIRED: the housekeeping's look at the running jobs: notes the server clock (a gap since
  the last round means a stall: prelude's reaping_allowed) and lists the jobs whose lease
  expired, none while a stall's grace lasts. reap.lua checks each again.

  Input:
    KEYS[1] queue:clock     hash: seen (the last round's clock), since (the last stall's end)
    KEYS[2] queue:running   zset of running job ids by lease expiry

    ARGV[1] stall, ms (a longer gap between rounds is a stall)
    ARGV[2] lease, ms
    ARGV[3] at most this many ids

  Output:
    the ids of jobs whose lease expired (an empty list during a stall's grace)
]]
local now = now_ms()
if not rare().reaping_allowed(KEYS[1], now, tonumber(ARGV[1]), tonumber(ARGV[2])) then return {} end
return redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
