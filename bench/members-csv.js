// The benchmark audience, one generator for every bench: email, first_name, last_name,
// city, birthday (date), score (numeric) and group_name (four groups).
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

export async function writeMembersCsv(file, rows) {
  const out = createWriteStream(file);
  const cities = ['Oslo', 'Bergen', 'London', 'Paris', 'Berlin', 'New York', 'Tokyo', 'Lisbon'];
  const groups = ['Newsletter', 'Customers', 'VIP', 'Leads'];
  out.write('email,first_name,last_name,city,birthday,score,group_name\n');
  let buf = '';
  for (let i = 0; i < rows; i++) {
    const day = `${1950 + (i % 50)}-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')}`;
    buf += `user${i}@example.com,First${i},Last${i % 997},${cities[i % 8]},${day},${((i * 7) % 1000) / 10},${groups[i % 4]}\n`;
    if (buf.length > 1 << 20) {
      if (!out.write(buf)) await once(out, 'drain');
      buf = '';
    }
  }
  out.end(buf);
  await once(out, 'finish');
}
