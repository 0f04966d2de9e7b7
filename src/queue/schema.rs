//! The queue's schema, versioned: apalis-postgres's own (its jobs and workers tables, through
//! its migrations), then researchflow's in the `researchflow` schema, one numbered step each:
//! the batches, one row per question (its status, attempt, lease holder, plan and outcome),
//! the files beside each plan (events, transcript, report, reviews); a table of each
//! endpoint's shared rate budget that step 3 drops again (the workers divide the configured
//! budget by their count instead: `workers.rs`). `queue migrate` runs what is missing; [`check`] refuses a database whose schema is older (or newer) than this
//! program's, naming the command.

use super::db::{Db, QueueError};

/// The version this program reads and writes.
pub const VERSION: i32 = MIGRATIONS.len() as i32;

/// Each step, in order: step `i` brings the schema to version `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: batches, questions, files.
    r#"
    CREATE TABLE researchflow.batches (
        name text PRIMARY KEY,
        created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE researchflow.questions (
        batch text NOT NULL REFERENCES researchflow.batches (name),
        id text NOT NULL,
        name text NOT NULL,
        query text NOT NULL,
        seq integer NOT NULL,
        job_id text NOT NULL UNIQUE,
        status text NOT NULL DEFAULT 'pending',
        attempt integer NOT NULL DEFAULT 0,
        claim bigint NOT NULL DEFAULT 0,
        worker text,
        started_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now(),
        last_error text,
        plan text,
        totals jsonb,
        reason text,
        review jsonb,
        PRIMARY KEY (batch, id),
        UNIQUE (batch, name)
    );
    CREATE INDEX questions_by_status ON researchflow.questions (batch, status);
    CREATE TABLE researchflow.files (
        batch text NOT NULL,
        question text NOT NULL,
        suffix text NOT NULL,
        content bytea NOT NULL,
        PRIMARY KEY (batch, question, suffix),
        FOREIGN KEY (batch, question) REFERENCES researchflow.questions (batch, id)
    );
    "#,
    // 2: the rate budget of every endpoint, shared by every worker.
    r#"
    CREATE TABLE researchflow.gates (
        key text PRIMARY KEY,
        state jsonb NOT NULL DEFAULT '{}',
        updated_at timestamptz NOT NULL DEFAULT now()
    );
    "#,
    // 3: the lines of the files a run appends to (its event log, its transcript), a row each,
    // numbered; what earlier versions stored of them whole becomes each file's line 0.
    r#"
    CREATE TABLE researchflow.lines (
        batch text NOT NULL,
        question text NOT NULL,
        suffix text NOT NULL,
        seq bigint NOT NULL,
        line bytea NOT NULL,
        PRIMARY KEY (batch, question, suffix, seq),
        FOREIGN KEY (batch, question) REFERENCES researchflow.questions (batch, id)
    );
    INSERT INTO researchflow.lines (batch, question, suffix, seq, line)
    SELECT batch, question, suffix, 0, content FROM researchflow.files
    WHERE suffix IN ('events.ndjson', 'transcript.jsonl');
    DELETE FROM researchflow.files WHERE suffix IN ('events.ndjson', 'transcript.jsonl');
    "#,
    // 4: no shared rate budget any more: each worker takes its share of the configured one,
    // among the workers running questions (counted a few times a second).
    r#"
    DROP TABLE IF EXISTS researchflow.gates;
    CREATE INDEX IF NOT EXISTS questions_running ON researchflow.questions (worker) WHERE status = 'running';
    "#,
];

/// What `queue migrate` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migrated {
    /// The version found (0: none).
    pub from: i32,
    pub to: i32,
}

/// Creates or upgrades the schema: apalis-postgres's migrations, then each missing step of
/// ours in one transaction, under a lock so that two runs at once do it once.
pub async fn migrate(db: &Db) -> Result<Migrated, QueueError> {
    apalis_postgres::PostgresStorage::setup(&db.pool)
        .await
        .map_err(|e| {
            QueueError::Database(db.url.redact(&format!(
                "cannot create the job tables (apalis) in `{}`: {e}",
                db.url.shown()
            )))
        })?;
    let fail = |e: sqlx::Error| db.failed("migrating the schema", &e);
    let mut tx = db.begin().await.map_err(fail)?;
    for statement in [
        "SELECT pg_advisory_xact_lock(hashtext('researchflow.migrate'))",
        "CREATE SCHEMA IF NOT EXISTS researchflow",
        "CREATE TABLE IF NOT EXISTS researchflow.schema_version (
            one boolean PRIMARY KEY DEFAULT true CHECK (one),
            version integer NOT NULL
        )",
    ] {
        sqlx::query(statement)
            .execute(&mut *tx)
            .await
            .map_err(fail)?;
    }
    let from: i32 = sqlx::query_scalar("SELECT version FROM researchflow.schema_version")
        .fetch_optional(&mut *tx)
        .await
        .map_err(fail)?
        .unwrap_or(0);
    if from > VERSION {
        return Err(newer(db, from));
    }
    for step in MIGRATIONS.iter().skip(usize::try_from(from).unwrap_or(0)) {
        sqlx::raw_sql(*step).execute(&mut *tx).await.map_err(fail)?;
    }
    sqlx::query(
        "INSERT INTO researchflow.schema_version (version) VALUES ($1)
         ON CONFLICT (one) DO UPDATE SET version = EXCLUDED.version",
    )
    .bind(VERSION)
    .execute(&mut *tx)
    .await
    .map_err(fail)?;
    tx.commit().await.map_err(fail)?;
    Ok(Migrated { from, to: VERSION })
}

/// Parses `url`, connects (at most `connections` at once) and checks that the schema is this
/// program's: what every command but `queue migrate` does first.
pub async fn open(url: &str, connections: u32) -> Result<Db, QueueError> {
    let url = super::url::QueueUrl::parse(url).map_err(QueueError::Setup)?;
    let db = Db::connect(url, connections).await?;
    check(&db).await?;
    Ok(db)
}

/// Refuses a database whose schema is not this program's version, naming what to run.
pub async fn check(db: &Db) -> Result<(), QueueError> {
    let found = db
        .retrying("reading the schema version", || {
            sqlx::query_scalar::<_, i32>("SELECT version FROM researchflow.schema_version")
                .fetch_optional(&db.pool)
        })
        .await;
    let migrate = format!(
        "run `researchflow queue migrate --queue {}`",
        db.url.shown()
    );
    match found {
        Ok(Some(v)) if v == VERSION => Ok(()),
        Ok(Some(v)) if v > VERSION => Err(newer(db, v)),
        Ok(Some(v)) => Err(QueueError::Setup(format!(
            "the queue's schema is version {v}, older than this researchflow's {VERSION}: {migrate}"
        ))),
        Ok(None) | Err(QueueError::Database(_)) => Err(QueueError::Setup(format!(
            "the database `{}` holds no researchflow queue yet: {migrate}",
            db.url.database
        ))),
        Err(e) => Err(e),
    }
}

fn newer(db: &Db, found: i32) -> QueueError {
    QueueError::Setup(format!(
        "the queue `{}` was migrated by a newer researchflow (schema version {found}, this one knows {VERSION}): upgrade researchflow",
        db.url.shown()
    ))
}
