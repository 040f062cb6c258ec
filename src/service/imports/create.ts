/** Opening an import: a staged job (POST /members) or a stream (the CLI's batches). */
import { inTransaction } from '../../store/db.js';
import { stmt } from '../../store/statements.js';
import { badRequest } from '../../errors.js';
import { stamp } from '../clock.js';
import type { Ctx } from '../context.js';
import { FieldCatalog } from '../audience/fields.js';
import { requireGroups } from '../audience/groups.js';
import { getImport, type ImportOptions, type ImportRecord } from './records.js';
import { RESERVED } from './check.js';

/** What a client may record of its own options on an import (client_options). */
const CLIENT_OPTIONS_LIMIT = 16 * 1024;

export function checkOptions(ctx: Ctx, opts: ImportOptions) {
  if (opts.group_ids?.length) requireGroups(ctx, opts.group_ids);
  if (opts.client_options && JSON.stringify(opts.client_options).length > CLIENT_OPTIONS_LIMIT)
    throw badRequest(`client_options: must be at most ${CLIENT_OPTIONS_LIMIT} characters of JSON`, { field: 'client_options' });
}

export function insertImport(ctx: Ctx, opts: ImportOptions, mode: 'job' | 'stream'): number {
  const now = stamp(ctx.clock.now());
  return Number(
    stmt(
      ctx.db,
      `INSERT INTO member_imports (account_id, status, mode, source_name, source_filename, add_only, group_ids,
                                   automate_field_changes, automate_contact_imports, sms_criteria, created_at,
                                   import_started, client_options)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      ctx.accountId,
      mode === 'job' ? 'q' : 'p',
      mode,
      opts.source_name ?? null,
      opts.source_filename ?? null,
      opts.add_only ? 1 : 0,
      JSON.stringify([...new Set(opts.group_ids ?? [])]),
      opts.automate_field_changes ? 1 : 0,
      opts.automate_contact_imports ? 1 : 0,
      opts.sms ? JSON.stringify(opts.sms) : null,
      now,
      mode === 'stream' ? now : null,
      mode === 'stream' && opts.client_options ? JSON.stringify(opts.client_options) : null,
    ).lastInsertRowid,
  );
}

/**
 * Unknown field names in any row are a 400 before anything is written: an import
 * with a misspelt column must not half-apply.
 */
function checkFieldNames(catalog: FieldCatalog, members: Record<string, unknown>[]) {
  const seen = new Set<string>();
  members.forEach((m, i) => {
    for (const key of Object.keys(m)) {
      if (RESERVED.has(key) || seen.has(key)) continue;
      if (!catalog.byName.has(key.toLowerCase()))
        throw badRequest(`members[${i}].${key}: unknown field "${key}" (define it with amsg fields create)`, {
          field: `members[${i}].${key}`,
        });
      seen.add(key);
    }
  });
}

/** Staged rows per INSERT: at most 3 × 100 bound values, and at most 100 statement texts kept. */
const STAGE_CHUNK = 100;

/** POST /members: stages the rows as a job and answers its id at once. */
export function stageImport(ctx: Ctx, members: Record<string, unknown>[], opts: ImportOptions): { import_id: number } {
  return inTransaction(ctx.db, () => {
    checkOptions(ctx, opts);
    checkFieldNames(FieldCatalog.of(ctx), members);
    const importId = insertImport(ctx, opts, 'job');
    // Many rows per statement: a small bulk add was one INSERT per member.
    for (let from = 0; from < members.length; from += STAGE_CHUNK) {
      const chunk = members.slice(from, from + STAGE_CHUNK);
      const values: unknown[] = [];
      chunk.forEach((m, i) => values.push(importId, from + i, JSON.stringify(m)));
      stmt(ctx.db, `INSERT INTO import_rows (import_id, seq, member) VALUES ${'(?, ?, ?), '.repeat(chunk.length - 1)}(?, ?, ?)`).run(
        ...values,
      );
    }
    return { import_id: importId };
  });
}

/** Opens a streamed import (extension); rows follow with appendRows. */
export function openImport(ctx: Ctx, opts: ImportOptions): ImportRecord {
  const record = inTransaction(ctx.db, () => {
    checkOptions(ctx, opts);
    return getImport(ctx, insertImport(ctx, opts, 'stream'));
  });
  ctx.importWriter?.warm();
  return record;
}
