const D=require('better-sqlite3');const db=new D('/tmp/sp/m20.db',{readonly:true});
const COLS=`member_id, account_id, email, member_status_id, plaintext_preferred, bounce_count, member_since, last_modified_at, deleted_at, field_values, sms_phone_number, sms_region_code, sms_transactional_status, sms_transactional_status_updated_at, sms_promotional_status, sms_promotional_status_updated_at`;
const PC=COLS.split(', ').map(c=>'m.'+c).join(', ');
const W='LIMIT CAST(@limit AS INTEGER) OFFSET CAST(@offset AS INTEGER)';
const inner=`SELECT member_id FROM members WHERE account_id = @account AND deleted_at IS NULL AND member_id > @after ORDER BY member_id ${W}`;
const j=db.prepare(`SELECT ${PC} FROM (${inner}) AS page CROSS JOIN members m ON m.member_id = page.member_id ORDER BY page.member_id`).raw();
const d=db.prepare(`SELECT ${COLS} FROM members WHERE account_id = @account AND deleted_at IS NULL AND member_id > @after ORDER BY member_id ${W}`).raw();
function t(fn){const N=3000;for(let i=0;i<300;i++)fn(i);const t0=process.hrtime.bigint();for(let i=0;i<N;i++)fn(i);return (Number(process.hrtime.bigint()-t0)/N/1000).toFixed(1)}
db.exec('BEGIN');
for(let r=0;r<4;r++) console.log('join',t((i)=>j.all({account:1,after:7000+(i%100),limit:50,offset:i%100})),'direct',t((i)=>d.all({account:1,after:7000+(i%100),limit:50,offset:i%100})));
