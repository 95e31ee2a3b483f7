-- setKeyLimit: TenantLimitStore#setKeyLimit (redis/tenant-limits.ts): the organization's own
-- API-key limit, a field of its record.
-- keys: 1
-- KEYS[1]  the organization's record
-- ARGV[1]  the limit ('' removes it)
-- Reply: 0 when there is no such organization (nothing written), else 1.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[1] == '' then redis.call('HDEL', KEYS[1], 'maxKeys') else redis.call('HSET', KEYS[1], 'maxKeys', ARGV[1]) end
return 1
