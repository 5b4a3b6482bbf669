//! The Lua scripts that write the Redis keys atomically (the key layout is described in
//! [`super`]): the compare-and-set apply of commits and loads, and history writes; both
//! mark the shared watches holding a changed id.

/// Lua: marks `id` changed in every shared watch holding it (`P:wby:ID` → `P:wd:WATCH`).
macro_rules! mark_dirty_lua {
    () => {
        r"
local function mark_dirty(p, id)
  for _, w in ipairs(redis.call('SMEMBERS', p .. ':wby:' .. id)) do
    redis.call('SADD', p .. ':wd:' .. w, id)
  end
end
"
    };
}

/// Compare-and-set apply: KEYS[1] the entity hash; ARGV: the number of checks, then
/// (id, expected record or "") pairs, then the number of commands, then each command as
/// its argument count followed by its arguments, then the key prefix and the changed ids
/// (marked in the shared watches holding them).
pub(super) const APPLY_SCRIPT: &str = concat!(
    mark_dirty_lua!(),
    r"
local ent = KEYS[1]
local n = tonumber(ARGV[1])
local i = 2
for k = 1, n do
  local cur = redis.call('HGET', ent, ARGV[i])
  if not cur then cur = '' end
  if cur ~= ARGV[i + 1] then return {'conflict', ARGV[i]} end
  i = i + 2
end
local m = tonumber(ARGV[i])
i = i + 1
for k = 1, m do
  local nargs = tonumber(ARGV[i])
  redis.call(unpack(ARGV, i + 1, i + nargs))
  i = i + 1 + nargs
end
local p = ARGV[i]
for k = i + 1, #ARGV do mark_dirty(p, ARGV[k]) end
redis.call('INCR', p .. ':ver')
return {'ok', ''}
"
);

/// History write: KEYS[1] the history set, KEYS[2] the entity hash; ARGV[1] the point id,
/// ARGV[2] the key prefix, then (instant key, member) pairs. Returns {inserted,
/// overwritten}, or {-1, -1} when the point is gone.
pub(super) const HIS_WRITE_SCRIPT: &str = concat!(
    mark_dirty_lua!(),
    r"
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then return {-1, -1} end
local ins, over = 0, 0
for i = 3, #ARGV, 2 do
  local key = ARGV[i]
  local removed = redis.call('ZREMRANGEBYLEX', KEYS[1], '[' .. key, '(' .. key .. '!')
  if removed > 0 then over = over + 1 else ins = ins + 1 end
  redis.call('ZADD', KEYS[1], 0, ARGV[i + 1])
end
mark_dirty(ARGV[2], ARGV[1])
redis.call('INCR', ARGV[2] .. ':ver')
return {ins, over}
"
);
