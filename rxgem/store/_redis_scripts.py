"""The Lua scripts of the Redis store: the two steps that read before they write, each
run atomically on the server so that they cost no extra round trip.

Keys are built inside the scripts from the owner's key base (``<prefix>{<owner>}:``, a
hash tag: one owner's keys share a cluster slot) and ids the store validated; nothing
is ever matched against a pattern.
"""

from __future__ import annotations

__all__ = ["DELETE", "LINK"]

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
