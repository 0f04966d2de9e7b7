//! `researchflow queue migrate --queue URL`: creates or upgrades the queue's schema (apalis's
//! job tables, then researchflow's, versioned); prints the versions before and after.

use serde_json::json;

use crate::cli::{QueueAction, QueueCommand};
use crate::exit::{CommandResult, ExitStatus};
use crate::output::print_json;
use crate::queue::schema::migrate;
use crate::queue::{Db, QueueUrl};

pub async fn run(args: QueueCommand) -> CommandResult {
    let QueueAction::Migrate(args) = args.action;
    let url = QueueUrl::parse(&args.queue)
        .map_err(|m| crate::exit::CommandError::usage(anyhow::anyhow!(m)))?;
    let db = Db::connect(url, 2).await.map_err(|e| e.into_command())?;
    let migrated = migrate(&db).await.map_err(|e| e.into_command())?;
    tracing::info!(
        "queue `{}`: schema version {} -> {}",
        db.url.shown(),
        migrated.from,
        migrated.to
    );
    print_json(&json!({
        "queue": db.url.shown(),
        "schema_version": migrated.to,
        "was": migrated.from,
    }))?;
    Ok(ExitStatus::Success)
}
