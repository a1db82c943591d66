--[[
  Stores a new RCADIA agent token (by its SHA-256) with its scopes, stamped with the
  server's clock.

  Input:
    KEYS[1] auth:token:<sha256>   the token's record

    ARGV[1] agent id (agt_...)
    ARGV[2] play scope (1/0)
    ARGV[3] host scope (1/0)
    ARGV[4] name ('' = none)
    ARGV[5] house identity (1/0)

  Output:
    1  stored
]]
redis.call('HSET', KEYS[1], 'agent', ARGV[1], 'play', ARGV[2], 'host', ARGV[3],
  'name', ARGV[4], 'house', ARGV[5], 'createdAtMs', now_ms())
return 1
