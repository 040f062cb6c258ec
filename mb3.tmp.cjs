const D=require('better-sqlite3');const db=new D('/tmp/sp/m20.db',{readonly:true});
console.log(db.prepare('select sqlite_version()').pluck().get());
const COLS=`member_id, account_id, email, member_status_id, plaintext_preferred, bounce_count, member_since, last_modified_at, deleted_at, field_values, sms_phone_number, sms_region_code, sms_transactional_status, sms_transactional_status_updated_at, sms_promotional_status, sms_promotional_status_updated_at`;
const base=`SELECT ${COLS} FROM members WHERE account_id = @account AND deleted_at IS NULL AND member_id > @after ORDER BY member_id`;
const a=db.prepare(base+' LIMIT @limit OFFSET @offset').raw();
const b=db.prepare(base+' LIMIT CAST(@limit AS INTEGER) OFFSET CAST(@offset AS INTEGER)').raw();
function t(name,fn){const N=3000;for(let i=0;i<300;i++)fn(i);const t0=process.hrtime.bigint();for(let i=0;i<N;i++)fn(i);return (Number(process.hrtime.bigint()-t0)/N/1000)}
db.exec('BEGIN');
for (let r=0;r<3;r++){
console.log('param same', t('',()=>a.all({account:1,after:7000,limit:50,offset:10})).toFixed(1),
 'param varying', t('',(i)=>a.all({account:1,after:7000,limit:50,offset:i%100})).toFixed(1),
 'cast same', t('',()=>b.all({account:1,after:7000,limit:50,offset:10})).toFixed(1),
 'cast varying', t('',(i)=>b.all({account:1,after:7000,limit:50,offset:i%100})).toFixed(1));
}
