--[[
  Whether sign-up's caps leave room for one more sign-up from a network (read only): looked
  at before a password is hashed, so a refused sign-up costs no hash. sign_up.lua checks the
  same caps again, atomically with the write; that check is the authority.

  Input:
    KEYS[1] agentkeys:net:<network>   zset of self-service creations from this network
    KEYS[2] agentkeys:all             zset of all self-service creations
    KEYS[3] signup:net:<network>      zset of sign-ups from this network
    KEYS[4] signup:all                zset of all sign-ups
    KEYS[5] signup:taken:<network>    zset of taken names this network was told of

    ARGV[1] window, ms (every cap is rolling over it)
    ARGV[2] self-service cap per network
    ARGV[3] self-service cap in total
    ARGV[4] sign-up cap per network
    ARGV[5] sign-up cap in total
    ARGV[6] taken-name answers per network

  Output:
    {'ok', 0}                  room now
    {'network_cap', wait_ms}   this network's cap (either) is reached; room in wait_ms
    {'daily_cap', wait_ms}     a total cap (either) is reached; room in wait_ms
    {'taken_cap', wait_ms}     this network was told of ARGV[6] taken names; room in wait_ms
]]
return sign_up_cap(now_ms()) or {'ok', 0}
