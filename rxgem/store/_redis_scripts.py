"""The Lua scripts of the Redis store: the steps that read before they write, each
run atomically on the server so that they cost no extra round trip.

Keys are built inside the scripts from the owner's key base (``<prefix>{<owner>}:``, a
hash tag: one owner's keys share a cluster slot) and ids the store validated; nothing
is ever matched against a pattern.
"""

from __future__ import annotations

__all__ = ["DELETE", "LINK", "REMEMBER"]

LINK = """
-- KEYS[1]: the new turn's hash. ARGV: key base, previous id, ttl in ms (0: none),
-- the most turns a chain may have. Records the new turn's ancestors (oldest first;
-- "!" when the chain is too long to follow) and makes every earlier turn of the chain,
-- with its item index entries, live as long as the new one.
local base, previous, ttl, most = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local ancestors = redis.call('HGET', base .. 't:' .. previous, 'ancestors')
if ancestors == '!' then
  redis.call('HSET', KEYS[1], 'ancestors', '!')
  return 0
end
local ids = {}
for id in string.gmatch(ancestors or '', '%S+') do ids[#ids + 1] = id end
ids[#ids + 1] = previous
if #ids >= most then
  redis.call('HSET', KEYS[1], 'ancestors', '!')
  return 0
end
redis.call('HSET', KEYS[1], 'ancestors', table.concat(ids, ' '))
if ttl > 0 then
  for _, id in ipairs(ids) do
    local turn = base .. 't:' .. id
    local items = redis.call('HGET', turn, 'items')
    if items then
      redis.call('PEXPIRE', turn, ttl)
      redis.call('PEXPIRE', turn .. ':in', ttl)
      redis.call('PEXPIRE', turn .. ':out', ttl)
      for item in string.gmatch(items, '%S+') do
        redis.call('PEXPIRE', base .. 'i:' .. item, ttl)
      end
    end
  end
end
return #ids
"""

DELETE = """
-- KEYS[1]: the turn's hash. ARGV: key base, turn id. Deletes the turn, its item lists
-- and the item index entries that still point at it; 1 if there was a turn.
local base, turn = ARGV[1], ARGV[2]
local items = redis.call('HGET', KEYS[1], 'items')
if not items then return 0 end
local mark = turn .. '\\n'
for item in string.gmatch(items, '%S+') do
  local key = base .. 'i:' .. item
  local value = redis.call('GET', key)
  if value and string.sub(value, 1, #mark) == mark then redis.call('DEL', key) end
end
redis.call('DEL', KEYS[1], KEYS[1] .. ':in', KEYS[1] .. ':out')
return 1
"""

REMEMBER = """
-- KEYS[1]: the owner's signature index (a sorted set of keys, the oldest first). ARGV:
-- key base, ttl in ms, the most signatures an owner keeps, then key, value pairs.
-- Sets each signature with its expiry, forgets index entries expired, and deletes the
-- oldest signatures beyond the bound. Scores are Redis's own time in microseconds, one
-- more than the newest for each signature, so that the order is the order remembered
-- whichever server's clock. Returns how many were evicted.
local base, ttl, most = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - ttl * 1000)
local score = now
local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if newest[2] and tonumber(newest[2]) >= score then score = tonumber(newest[2]) + 1 end
for i = 4, #ARGV, 2 do
  redis.call('SET', base .. 's:' .. ARGV[i], ARGV[i + 1], 'PX', ttl)
  redis.call('ZADD', KEYS[1], score, ARGV[i])
  score = score + 1
end
local over = redis.call('ZCARD', KEYS[1]) - most
if over > 0 then
  for _, key in ipairs(redis.call('ZRANGE', KEYS[1], 0, over - 1)) do
    redis.call('DEL', base .. 's:' .. key)
  end
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, over - 1)
else
  over = 0
end
redis.call('PEXPIRE', KEYS[1], ttl)
return over
"""
