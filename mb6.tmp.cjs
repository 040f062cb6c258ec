const D=require('better-sqlite3');const fs=require('fs');fs.copyFileSync('/tmp/sp/m20.db','/tmp/sp/m20c.db');
const db=new D('/tmp/sp/m20c.db');db.pragma('journal_mode=WAL');db.pragma('synchronous=NORMAL');
const up=db.prepare('UPDATE members SET bounce_count=bounce_count+1 WHERE member_id=?');
const bi=db.prepare('BEGIN IMMEDIATE'),c=db.prepare('COMMIT');
function t(name,fn){const N=5000;for(let i=0;i<500;i++)fn(i);const t0=process.hrtime.bigint();for(let i=0;i<N;i++)fn(i);console.log(name,(Number(process.hrtime.bigint()-t0)/N/1000).toFixed(1),'µs')}
t('update autocommit',(i)=>up.run(1+(i*7919)%20000));
t('begin imm+update+commit',(i)=>{bi.run();up.run(1+(i*7919)%20000);c.run()});
const tx=db.transaction((i)=>up.run(1+(i*7919)%20000));
t('db.transaction.immediate',(i)=>tx.immediate(i));
bi.run();t('update in open txn',(i)=>up.run(1+(i*7919)%20000));c.run();
t('5 updates per txn /5',(i)=>{if(i%5===0)bi.run();up.run(1+(i*7919)%20000);if(i%5===4)c.run()});
