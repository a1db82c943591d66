--[[
  Changes what a thread list shows of one thread in one step with its listing indexes
  (board_index.lua): the operator hides or shows a post, sets a thread's status, an author
  withdraws a post (a first post withdraws its thread), or nothing changes and the thread is
  only put into its indexes as it is (building the indexes of a board written before them).

  Input:
    KEYS[1] board:thread:<thread_id>              the thread hash
    KEYS[2] board:post:<first_post_id>            the thread's first post
    KEYS[3] board:thread:<thread_id>:endorsers    set of endorsing accounts
    KEYS[4] board:post:<post_id>                  the post whose flag ARGV[4] sets (any post
                                                  key of the thread when ARGV[4] is '')
    KEYS[5]..KEYS[16] board:idx:...               the thread's 12 listing indexes for the
                                                  status in ARGV[2]
    KEYS[17]..KEYS[28] board:idx:...              the same for the status in ARGV[3]

    ARGV[1] thread id
    ARGV[2] the thread's status the caller read
    ARGV[3] its new status (ARGV[2] to keep it)
    ARGV[4] the post field to set: 'hidden', 'withdrawn' or '' (none)
    ARGV[5] its value ('1' / '0')
    ARGV[6] '1' also withdraw the thread, else '0'

  Output:
     1  done
     0  no such thread
    -1  the thread's status is no longer ARGV[2]: read it again and retry
]]
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return 0 end
if status ~= ARGV[2] then return -1 end
if ARGV[4] ~= '' then redis.call('HSET', KEYS[4], ARGV[4], ARGV[5]) end
if ARGV[6] == '1' then redis.call('HSET', KEYS[1], 'withdrawn', '1') end
if ARGV[3] ~= status then
  redis.call('HSET', KEYS[1], 'status', ARGV[3])
  board_unindex(5, ARGV[1])
end
board_index(KEYS[1], KEYS[2], KEYS[3], 17, ARGV[1])
return 1
