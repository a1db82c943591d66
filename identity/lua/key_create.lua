--[[
  Adds a key to an existing account, within the cap on active keys.

  Input:
    KEYS[1] account:<account>          the account hash (must exist)
    KEYS[2] account:<account>:keys     set of the account's key hashes
    KEYS[3] key:<hash>                 the new key's record
    KEYS[4] keyprefix:<prefix>         prefix -> hash (claimed with NX)

    ARGV[1] key hash (SHA-256, hex)
    ARGV[2] key id
    ARGV[3] key prefix
    ARGV[4] account name
    ARGV[5] label
    ARGV[6] creation time, ms
    ARGV[7] most active keys an account may have

  Output:
     1  created (or created by this very call already: a client on a cluster sends a
        script again after a timeout or a cut connection; the second run finds its own
        random key's prefix and hash)
     0  the account has ARGV[7] active keys already
    -1  no such account
    -2  the prefix is taken (a collision of random prefixes: try again)
]]
if redis.call('GET', KEYS[4]) == ARGV[1] then return 1 end
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[7]) then return 0 end
if not redis.call('SET', KEYS[4], ARGV[1], 'NX') then return -2 end
redis.call('HSET', KEYS[3], 'hash', ARGV[1], 'id', ARGV[2], 'prefix', ARGV[3],
  'account', ARGV[4], 'label', ARGV[5], 'createdAtMs', ARGV[6], 'revoked', '0')
redis.call('SADD', KEYS[2], ARGV[1])
return 1
