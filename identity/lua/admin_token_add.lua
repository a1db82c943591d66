--[[
  Stores an admin token (by its SHA-256) as active, unless that hash was ever stored
  (active or retired: a retired configured token stays retired across restarts).

  Input:
    KEYS[1] admintoken:<sha256>   the token's record
    KEYS[2] admintokens           hash: id -> sha256

    ARGV[1] id
    ARGV[2] label
    ARGV[3] who created it
    ARGV[4] the token's SHA-256 (hex)

  Output:
    1  added
    0  the hash was stored before (nothing written)
]]
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'label', ARGV[2], 'createdBy', ARGV[3],
  'createdAtMs', now_ms(), 'retiredAtMs', '0')
redis.call('HSET', KEYS[2], ARGV[1], ARGV[4])
return 1
