--[[
  How long a sign-in for one name from one client must wait, from the failures recorded by
  sign_in_record.lua (read only). Three counters, each a hash {n = failures, last = ms of
  the newest}, each with its own number of free failures; past it, every further failure
  doubles the wait after the newest one (1 s, 2 s, 4 s, ... at most ARGV[4]):
  - the name from this client: the owner mistyping, or a guesser at one address;
  - this client, any name: one address guessing many names;
  - the name from every client: guessing spread over many addresses. This one does not
    hold for a client the name's owner signed in from before (KEYS[4]), so nobody can keep
    the owner out from their own address by failing elsewhere.

  Input:
    KEYS[1] signin:pair:<name hash>|<client>  failures of this name from this client
    KEYS[2] signin:client:<client>            failures from this client, any name
    KEYS[3] signin:name:<name hash>           failures of this name, any client
    KEYS[4] signin:known:<name>               set of clients the name signed in from

    ARGV[1] free failures of the pair
    ARGV[2] free failures of the client
    ARGV[3] free failures of the name
    ARGV[4] the longest wait, ms
    ARGV[5] the client (as in KEYS[1])

  Output:
    {wait_ms, which}   0 and '' when the sign-in may go ahead; else the ms to wait and
                       which counter holds it ('pair', 'client' or 'name')
]]
local now = now_ms()
local cap = tonumber(ARGV[4])
local function wait(k, free)
  local v = redis.call('HMGET', k, 'n', 'last')
  local n, last = tonumber(v[1] or '0'), tonumber(v[2] or '0')
  if n < free then return 0 end
  local delay = math.min(1000 * 2 ^ math.min(n - free, 30), cap)
  return math.max(0, last + delay - now)
end
local best, which = wait(KEYS[1], tonumber(ARGV[1])), 'pair'
local c = wait(KEYS[2], tonumber(ARGV[2]))
if c > best then best, which = c, 'client' end
if redis.call('SISMEMBER', KEYS[4], ARGV[5]) == 0 then
  local n = wait(KEYS[3], tonumber(ARGV[3]))
  if n > best then best, which = n, 'name' end
end
if best <= 0 then return {0, ''} end
return {math.ceil(best), which}
