--[[
  FAIR-SWEEP: drop the entries of accounts with nothing waiting from queue:fair, a slice at
  a time. The claim leaves an account's count at zero and its turns in place (one write a
  claim, not two); without this sweep they would stay for every account that ever queued.
  An account with nothing waiting is not read by admission (its turn counts only while its
  count is above zero), so dropping its entries changes nothing a job sees. Each round (a
  call with cursor '0') also sets 'n' to the lanes' ZCARDs: every script that adds or
  removes a waiting job keeps it, and this puts it right within a round whatever changed
  the lanes otherwise (an operator's hand, a bug). Once a day ('days_swept' names the last
  day it did) it also drops the days' charges and finished jobs' counts ('charged:<day>',
  kept by the claims, and 'done:<day>:<kind>:<state>', kept by the slots' completions) of
  the 30 days before the last four: the day's figures are read for today (the budget
  hashes live three days).

  Input:
    KEYS[1] queue:fair              (keys.rs)
    KEYS[2] queue:lane:planner      the lanes
    KEYS[3] queue:lane:referee

    ARGV[1] the HSCAN cursor to go on from ('0' to start)
    ARGV[2] how many fields to look at (HSCAN's COUNT)
    ARGV[3] the '<kind>:<state>' ends of the finished jobs' counts, separated by spaces

  Output:
    {cursor, dropped}  the cursor to pass next ('0': the sweep went round), and how many
                       accounts' entries were dropped
]]
local fk = KEYS[1]
if ARGV[1] == '0' then
  local n = redis.call('ZCARD', KEYS[2]) + redis.call('ZCARD', KEYS[3])
  local today = day_of(now_ms())
  local f = redis.call('HMGET', fk, 'n', 'days_swept')
  local set = {'HSET', fk}
  if tonumber(f[1]) ~= n then set[#set + 1] = 'n'; set[#set + 1] = n end
  if tonumber(f[2]) ~= today then
    local old, ends = {}, {}
    for e in string.gmatch(ARGV[3] or '', '%S+') do ends[#ends + 1] = e end
    for d = today - 33, today - 4 do
      old[#old + 1] = 'charged:' .. d
      for _, e in ipairs(ends) do old[#old + 1] = 'done:' .. d .. ':' .. e end
    end
    redis.call('HDEL', fk, unpack(old))
    set[#set + 1] = 'days_swept'; set[#set + 1] = today
  end
  if #set > 2 then redis.call(unpack(set)) end
end
local r = redis.call('HSCAN', fk, ARGV[1], 'MATCH', 'w:*', 'COUNT', tonumber(ARGV[2]))
local dropped = 0
for i = 1, #r[2], 2 do
  if (tonumber(r[2][i + 1]) or 0) <= 0 then
    local account = string.sub(r[2][i], 3)
    redis.call('HDEL', fk, r[2][i], 'a:planner:' .. account, 'a:referee:' .. account)
    dropped = dropped + 1
  end
end
return {r[1], dropped}
