--[[
  Retires an admin token unless it is the last active one. The caller names another token
  it saw active (the witness): retiring is allowed only while the witness is still active,
  so two retirements at once can never leave no active token (Redis runs them one after
  the other, and the second sees its witness retired).

  Input:
    KEYS[1] admintokens                     hash: id -> sha256
    KEYS[2] admintoken:<sha256 of ARGV[1]>  the record of the token to retire
    KEYS[3] admintoken:<sha256 of ARGV[3]>  the witness's record

    ARGV[1] id of the token to retire
    ARGV[2] its SHA-256 (hex), as the caller read it from KEYS[1]
    ARGV[3] id of the witness (another token the caller saw active)

  Output:
    'ok'       retired (retiredAtMs set to now)
    'missing'  no token ARGV[1] with that hash
    'retired'  already retired
    'witness'  the witness is retired, gone or the same token: read again and retry
               (no witness at all means ARGV[1] is the last active token)
]]
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 'missing' end
if redis.call('HGET', KEYS[2], 'retiredAtMs') ~= '0' then return 'retired' end
if ARGV[3] == ARGV[1] or redis.call('HGET', KEYS[3], 'id') ~= ARGV[3]
    or redis.call('HGET', KEYS[3], 'retiredAtMs') ~= '0' then
  return 'witness'
end
redis.call('HSET', KEYS[2], 'retiredAtMs', now_ms())
return 'ok'
