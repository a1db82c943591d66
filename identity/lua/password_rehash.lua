--[[
  Replaces a person's password hash made with older parameters by one made with today's,
  only if the stored hash is still the one the sign-in checked: a password changed in the
  meantime (set_password) is never overwritten by a hash of the old password.

  Input:
    KEYS[1] account:<name>   the account hash

    ARGV[1] the PHC string the sign-in verified
    ARGV[2] the new PHC string (the same password, today's parameters)

  Output:
    1  replaced
    0  the stored hash changed since; nothing written
]]
if redis.call('HGET', KEYS[1], 'password') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'password', ARGV[2])
return 1
