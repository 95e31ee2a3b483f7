-- createMember: Store#createMemberIfEmailFree (redis/members.ts), the member's record; its
-- e-mail is claimed after (under the e-mail's own tag), and the record deleted if that fails.
-- keys: 2
-- KEYS[1]  the organization's record
-- KEYS[2]  the organization's members (hash)
-- ARGV[1]  the member id
-- ARGV[2]  the member as JSON {e,h,r,c}
-- Reply: 'created', 'no-organization' or 'exists'.
if redis.call('EXISTS', KEYS[1]) == 0 then return 'no-organization' end
if redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2]) == 0 then return 'exists' end
return 'created'
