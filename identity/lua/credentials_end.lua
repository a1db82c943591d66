--[[
  Ends what a person is signed in with, in one step: every JWT (the credential generation
  moves, and with it the revocation epoch) and every browser session (the index of their
  sessions is emptied: a session works only while the index holds it), optionally with a new
  password and the revocation of every agent key (the set of active keys is emptied: a key
  works only while the set holds it). One step, so a change either took effect whole or not
  at all: a password change that asked for the keys to be revoked never leaves them working
  after the new password took. What is left (the session and key records themselves) is
  tidied by the caller with the hashes this returns; they no longer open anything.

  Input:
    KEYS[1] account:<name>               the person's account hash
    KEYS[2] account:<name>:keys          set of the hashes of their active agent keys
    KEYS[3] account:<name>:websessions   set of the hashes of their browser sessions
    KEYS[4] auth:usergen:<name>          their credential generation
    KEYS[5] auth:epoch                   the revocation epoch

    ARGV[1] the new password's PHC string, or '' to keep the password (sign-out everywhere,
            a block, a deletion)
    ARGV[2] '1' to revoke every agent key too, else '0'

  Output:
    {1, {session hashes...}, {key hashes...}}   done: the sessions ended, the keys revoked
    {0, {}, {}}                                 a new password for an account that is not a
                                                person with one; nothing written
]]
if ARGV[1] ~= '' then
  if redis.call('HGET', KEYS[1], 'kind') ~= 'human'
      or redis.call('HEXISTS', KEYS[1], 'password') == 0 then
    return {0, {}, {}}
  end
  redis.call('HSET', KEYS[1], 'password', ARGV[1])
end
redis.call('INCR', KEYS[4])
redis.call('INCR', KEYS[5])
local sessions = redis.call('SMEMBERS', KEYS[3])
redis.call('DEL', KEYS[3])
local keys = {}
if ARGV[2] == '1' then
  keys = redis.call('SMEMBERS', KEYS[2])
  redis.call('DEL', KEYS[2])
end
return {1, sessions, keys}
