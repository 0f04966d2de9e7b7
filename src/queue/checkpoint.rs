//! A checkpoint in one statement: the claim checked (and its row locked), the plan stored and
//! what each appended file gained added, fenced by the claim, committed without waiting for
//! the server's disk. A checkpoint sits on its run's critical path, and the transaction it
//! replaces took six round trips to the server; on a busy machine each of them waits its turn
//! for a CPU. When an appended file does not hold in the database what the worker thinks (a
//! retry after a commit whose answer was lost, a checkpoint lost in a server crash), the
//! caller stores the checkpoint again the long way, which sends such a file whole
//! (`mirror.rs`).

use sqlx::PgExecutor;

use super::claim::Claimed;

/// How a checkpoint in one statement went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtOnce {
    /// Stored, every appended file with it.
    Stored,
    /// Another worker holds the question: nothing was written.
    Lost,
    /// The plan was stored, but an appended file does not hold what `from` said: store it
    /// again the long way.
    Unmatched,
}

/// Stores the checkpoint `text` and appends to each file `(suffix, from, bytes)` when the
/// database holds `from` bytes of it (or none, with `from` 0), in one statement.
pub async fn store(
    db: impl PgExecutor<'_>,
    c: &Claimed,
    text: &str,
    appended: &[(String, u64, Vec<u8>)],
) -> Result<AtOnce, sqlx::Error> {
    let suffixes: Vec<&str> = appended.iter().map(|(s, _, _)| s.as_str()).collect();
    let from: Vec<i64> = appended
        .iter()
        .map(|(_, from, _)| i64::try_from(*from).unwrap_or(i64::MAX))
        .collect();
    let bytes: Vec<&[u8]> = appended.iter().map(|(_, _, b)| b.as_slice()).collect();
    let (held, sent, setting): (bool, i64, String) = sqlx::query_as(
        // `set_config(..., true)` lasts until the end of the statement's own transaction,
        // whose commit it governs; `held` reads it, so it is set before anything is written.
        "WITH setting AS MATERIALIZED (
             SELECT set_config('synchronous_commit', 'off', true) AS value
         ), held AS (
             SELECT 1 FROM researchflow.questions q, setting
             WHERE q.batch = $1 AND q.id = $2 AND q.claim = $3
             FOR UPDATE OF q
         ), plan AS (
             UPDATE researchflow.questions SET plan = $4, updated_at = now()
             WHERE batch = $1 AND id = $2 AND EXISTS (SELECT 1 FROM held)
         ), gained AS (
             SELECT * FROM unnest($5::text[], $6::bigint[], $7::bytea[]) AS g(suffix, held, bytes)
         ), grown AS (
             UPDATE researchflow.files f SET content = f.content || g.bytes
             FROM gained g
             WHERE f.batch = $1 AND f.question = $2 AND f.suffix = g.suffix
               AND octet_length(f.content) = g.held AND EXISTS (SELECT 1 FROM held)
             RETURNING 1
         ), new AS (
             INSERT INTO researchflow.files (batch, question, suffix, content)
             SELECT $1, $2, g.suffix, g.bytes FROM gained g
             WHERE g.held = 0 AND EXISTS (SELECT 1 FROM held)
             ON CONFLICT (batch, question, suffix) DO NOTHING
             RETURNING 1
         )
         SELECT EXISTS (SELECT 1 FROM held),
                (SELECT count(*) FROM grown) + (SELECT count(*) FROM new),
                (SELECT value FROM setting)",
    )
    .bind(&c.batch)
    .bind(&c.id)
    .bind(c.claim)
    .bind(text)
    .bind(&suffixes)
    .bind(&from)
    .bind(&bytes)
    .fetch_one(db)
    .await?;
    debug_assert_eq!(setting, "off");
    Ok(match (held, usize::try_from(sent).ok()) {
        (false, _) => AtOnce::Lost,
        (true, Some(n)) if n == appended.len() => AtOnce::Stored,
        (true, _) => AtOnce::Unmatched,
    })
}
