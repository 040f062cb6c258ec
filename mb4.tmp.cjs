const D=require('better-sqlite3');const db=new D('/tmp/sp/m20.db',{readonly:true});
const COLS=`member_id, account_id, email, member_status_id, plaintext_preferred, bounce_count, member_since, last_modified_at, deleted_at, field_values, sms_phone_number, sms_region_code, sms_transactional_status, sms_transactional_status_updated_at, sms_promotional_status, sms_promotional_status_updated_at`;
const base=`SELECT ${COLS} FROM members WHERE account_id = @account AND deleted_at IS NULL AND member_id > @after ORDER BY member_id`;
const s=db.prepare(base+(process.argv[2]==='cast'?' LIMIT CAST(@limit AS INTEGER) OFFSET CAST(@offset AS INTEGER)':' LIMIT @limit OFFSET @offset')).raw();
db.exec('BEGIN');for(let i=0;i<20000;i++) s.all({account:1,after:7000,limit:50,offset:i%100});
