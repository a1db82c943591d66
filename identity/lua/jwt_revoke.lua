--[[
  Signs out one JWT: marks it revoked until it would expire anywhere and moves the
  revocation epoch, but only a JWT that still works. One that was signed out already, or
  whose person's credentials changed since it was issued (a new password, a block, a
  deletion), is refused and moves nothing: every move of the epoch empties every API
  process's identity cache, so a JWT signed out once could otherwise do that again with
  every request for 7 days.

  Input:
    KEYS[1] auth:usergen:<name>       the person's credential generation (absent: 0)
    KEYS[2] auth:jwtrevoked:<id>      the JWT's revocation mark
    KEYS[3] auth:epoch                the revocation epoch

    ARGV[1] the generation the JWT was issued in
    ARGV[2] the mark's lifetime, s: what the JWT has left on the caller's clock and a
            day more (auth.rs, CLOCK_SKEW_ALLOWANCE_SECONDS: other processes' clocks may
            be behind)

  Output:
    1  signed out now (the mark is set, the epoch moved)
    0  not a JWT that works: signed out already, or of credentials that changed
]]
if (redis.call('GET', KEYS[1]) or '0') ~= ARGV[1] then return 0 end
if redis.call('SET', KEYS[2], 1, 'NX', 'EX', ARGV[2]) == false then return 0 end
redis.call('INCR', KEYS[3])
return 1
