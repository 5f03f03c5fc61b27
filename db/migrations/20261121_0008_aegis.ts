import type { Knex } from 'knex';

/** aegis: posture scans of a tenant's own Portico set-up and the findings each scan produced. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('aegis_scans', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('status', 16).notNullable().checkIn(['completed'], 'aegis_scans_status_check');
    t.integer('checks_run').notNullable();
    t.integer('subjects_examined').notNullable();
    t.string('started_by', 36);
    t.bigInteger('started_at').notNullable();
    t.bigInteger('completed_at').notNullable();
    t.index(['tenant_id', 'started_at'], 'aegis_scans_tenant_started_idx');
  });
  await knex.schema.createTable('aegis_findings', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('scan_id', 36).notNullable().references('id').inTable('aegis_scans').onDelete('CASCADE');
    t.string('check_name', 48).notNullable();
    t.string('severity', 16).notNullable().checkIn(['critical', 'high', 'medium', 'low', 'info'], 'aegis_findings_severity_check');
    // 4 = critical … 0 = info, so that "most severe first" is an index-friendly ORDER BY.
    t.integer('severity_rank').notNullable();
    t.string('status', 16).notNullable().checkIn(['open', 'resolved'], 'aegis_findings_status_check');
    t.string('title', 300).notNullable();
    t.text('detail').notNullable();
    t.text('recommendation').notNullable();
    t.string('subject_kind', 32).notNullable();
    t.string('subject_id', 255).notNullable();
    t.string('subject_label', 300);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('resolved_at');
    t.string('resolved_by', 36);
    t.string('resolution_note', 1000);
    t.index(['scan_id', 'severity_rank'], 'aegis_findings_scan_severity_idx');
    t.index(['tenant_id', 'status', 'severity_rank'], 'aegis_findings_tenant_status_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('aegis_findings');
  await knex.schema.dropTable('aegis_scans');
}
